package main

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/synth"
)

// decodeAll runs a capture held in memory through source → session and
// returns the number of game packets.
func decodeAll(b *testing.B, data []byte) int {
	rd, err := source.NewReader(bytes.NewReader(data), "bench")
	if err != nil {
		b.Fatal(err)
	}
	tr := session.NewTracker(decode.VersionUnknown)
	n := 0
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if r := tr.Process(d); r.Kind == session.Game {
			n++
		}
	}
	return n
}

func benchDecode(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	pkts := 0
	for b.Loop() {
		pkts = decodeAll(b, data)
	}
	b.ReportMetric(float64(pkts)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

func realMulti(b *testing.B) []byte {
	data, err := os.ReadFile(realcap.Path(b, "modern/multi/multi.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkDecodeReal decodes the real modern/multi capture (14326 packets).
func BenchmarkDecodeReal(b *testing.B) { benchDecode(b, realMulti(b)) }

// BenchmarkReadReal is "pmdump read" on the real modern/multi capture,
// printing one line per packet to io.Discard.
func BenchmarkReadReal(b *testing.B) {
	path := filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap")
	data := realMulti(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if code := run([]string{"read", path}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(14326*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

// BenchmarkTimelineRandomAccess rebuilds states of random clients at random
// entries from the timeline index of the real modern/multi capture (from a
// checkpoint or keyframe and at most 32 difs): the time per state is the
// random-access latency.
func BenchmarkTimelineRandomAccess(b *testing.B) {
	path := filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap")
	realMulti(b)
	e := indexed(b, path)
	type ref struct {
		c reassemble.Chain
		i int
	}
	var refs []ref
	for _, c := range e.Lines() {
		for i, en := range e.Entries(nil, c, 0, -1) {
			if en.Status == replay.OK {
				refs = append(refs, ref{c, i})
			}
		}
	}
	var err error
	r := rand.New(rand.NewPCG(1, 1))
	var buf []byte
	b.ResetTimer()
	for b.Loop() {
		x := refs[r.IntN(len(refs))]
		if buf, err = e.State(buf[:0], x.c, x.i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/state")
}

// BenchmarkStatesReal is "pmdump states" on the real modern/multi capture:
// reassemble, inflate, rebuild and hash its 7449 difs.
func BenchmarkStatesReal(b *testing.B) {
	path := filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap")
	realMulti(b)
	for b.Loop() {
		if code := run([]string{"states", path}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(7449*float64(b.N)/b.Elapsed().Seconds(), "states/s")
}

var (
	synthOnce sync.Once
	synthData []byte
)

// largeSynthetic is a synthetic 2-minute modern game of 8 players (the
// server and 7 clients), as a pcap in memory: about 70000 datagrams.
func largeSynthetic(b *testing.B) []byte {
	synthOnce.Do(func() {
		var buf bytes.Buffer
		w, err := synth.NewCaptureWriter(&buf, synth.Pcap)
		if err != nil {
			b.Fatal(err)
		}
		cfg := synth.Config{Era: decode.Modern, Players: 7, Duration: 2 * time.Minute, Seed: 3}
		if _, err := synth.Generate(cfg, w, nil); err != nil {
			b.Fatal(err)
		}
		w.Flush()
		synthData = buf.Bytes()
	})
	return synthData
}

// BenchmarkDecodeSynthetic decodes a large synthetic capture.
func BenchmarkDecodeSynthetic(b *testing.B) { benchDecode(b, largeSynthetic(b)) }

// bigMulti writes the real modern/multi capture appended 20 times (286,520
// packets, 172 MB: the file of the speed targets, scripts/compare-speed.sh)
// to a temporary file and returns its path.
func bigMulti(b *testing.B) string {
	data := realMulti(b)
	out := append([]byte(nil), data...)
	for range 19 {
		out = append(out, data[24:]...)
	}
	path := filepath.Join(b.TempDir(), "big.pcap")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		b.Fatal(err)
	}
	return path
}

// benchCommand runs a pmdump command on the big capture, its output
// discarded, and reports packets/s and the CPU time (user and system, both
// cores) per packet, which says more than the wall time on a busy machine.
func benchCommand(b *testing.B, args ...string) {
	path := bigMulti(b)
	args = append(args, path)
	const packets = 20 * 14326
	var cpu0, cpu1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	for b.Loop() {
		if code := run(args, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	cpu := cpu1.Utime.Nano() + cpu1.Stime.Nano() - cpu0.Utime.Nano() - cpu0.Stime.Nano()
	b.ReportMetric(packets*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(float64(cpu)/float64(packets*b.N), "cpu-ns/packet")
}

// BenchmarkReadBig is "pmdump read" on modern/multi appended 20 times.
func BenchmarkReadBig(b *testing.B) { benchCommand(b, "read") }

// BenchmarkStatsBig is "pmdump stats" on modern/multi appended 20 times
// (the target: within 2x of BenchmarkReadBig).
func BenchmarkStatsBig(b *testing.B) { benchCommand(b, "stats") }
