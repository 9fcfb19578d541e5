package replay_test

import (
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/internal/realdifs"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

var realOnce struct {
	sync.Once
	msgs []*reassemble.Message
	err  error
}

// realMessages returns every message of the real capture, reassembled,
// in the order they ended; it skips when the capture is not there.
func realMessages(tb testing.TB) []*reassemble.Message {
	tb.Helper()
	path := realcap.Path(tb, "modern/multi/multi.pcap")
	realOnce.Do(func() { realOnce.msgs, realOnce.err = realdifs.Messages(path) })
	if realOnce.err != nil {
		tb.Fatal(realOnce.err)
	}
	return realOnce.msgs
}

// TestRealCapture rebuilds the real capture and checks the outline of what
// comes out: three clients, a level change, almost every state rebuilt.
func TestRealCapture(t *testing.T) {
	msgs := realMessages(t)
	var status [4]int
	clients := map[any]bool{}
	slsns := map[int]bool{}
	for _, s := range rebuild(replay.Options{StateSize: stateSize}, msgs...) {
		status[s.Status]++
		clients[s.Client] = true
		slsns[s.SLSN] = true
		if s.Status == replay.OK && s.Size != stateSize {
			t.Errorf("%s %d→%d: %d bytes", s.Client, s.Src, s.Dst, s.Size)
		}
	}
	t.Logf("%d messages: %d ok, %d missing-base, %d incomplete, %d corrupt", len(msgs), status[0], status[1], status[2], status[3])
	if len(clients) != 3 || !slsns[0] || !slsns[1] || status[replay.Corrupt] != 0 || status[replay.OK] < len(msgs)*9/10 {
		t.Errorf("%d clients, slsns %v, statuses %v of %d", len(clients), slsns, status, len(msgs))
	}
}

// BenchmarkRebuild runs the synthetic two-client capture (about 120 difs of
// 112384-byte states) through a Builder; one op is the whole capture.
func BenchmarkRebuild(b *testing.B) {
	msgs, _ := syntheticCapture(b)
	for _, ck := range []int{0, 32} {
		b.Run(map[int]string{0: "no-checkpoints", 32: "checkpoints-32"}[ck], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				bd := replay.New(replay.Options{CheckpointEvery: ck}, func(s *replay.State) { n++ })
				for _, m := range msgs {
					bd.Add(m)
				}
				bd.Close()
				if n != len(msgs) {
					b.Fatalf("%d states for %d messages", n, len(msgs))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/state")
		})
	}
}

// BenchmarkFullPassVsInflate compares a Builder's full pass over the real
// capture (inflate, subtract, the states' Hash and, asked, sha256, every
// client) with only inflating the same difs one after the other; the
// x-inflate metric is the ratio.
func BenchmarkFullPassVsInflate(b *testing.B) {
	var complete []*reassemble.Message
	for _, m := range realMessages(b) {
		if m.Status == reassemble.Complete {
			complete = append(complete, m)
		}
	}
	inflateAll := func(f *reassemble.Inflater, dst []byte) []byte {
		for _, m := range complete {
			var err error
			if dst, err = f.Inflate(dst, m.Compressed, stateSize); err != nil {
				b.Fatal(err)
			}
		}
		return dst
	}
	var inflateNs float64 // per pass
	b.Run("inflate-only", func(b *testing.B) {
		var f reassemble.Inflater
		var dst []byte
		for b.Loop() {
			dst = inflateAll(&f, dst)
		}
		inflateNs = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(float64(len(complete)), "difs/op")
	})
	// The rebuild as the TUI runs it (each state's Hash) and as states
	// runs it (its sha256 too).
	for _, sha := range []bool{false, true} {
		b.Run(map[bool]string{false: "rebuild+hash", true: "rebuild+sha256"}[sha], func(b *testing.B) {
			ok := 0
			for b.Loop() {
				ok = 0
				bd := replay.New(replay.Options{StateSize: stateSize, SHA256: sha}, func(s *replay.State) {
					if s.Status == replay.OK {
						ok++
					}
				})
				for _, m := range complete {
					bd.Add(m)
				}
				bd.Close()
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if inflateNs == 0 { // inflate-only filtered out: time a few passes
				var f reassemble.Inflater
				var dst []byte
				start := time.Now()
				for range 5 {
					dst = inflateAll(&f, dst)
				}
				inflateNs = float64(time.Since(start).Nanoseconds()) / 5
			}
			b.ReportMetric(ns/inflateNs, "x-inflate")
			b.ReportMetric(ns/float64(len(complete)), "ns/state")
			b.ReportMetric(float64(ok), "states/op")
		})
	}
}
