package engine_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/fuzzcorpus"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/reassemble"
)

var (
	bigOnce sync.Once
	bigPath string
)

// TestMain removes the big capture of the benchmarks when they are done,
// and bounds the minimizing of what fuzzing finds: a FuzzEngine input (a
// game's first datagrams) is about 20 KB, at 5–15 ms a run.
func TestMain(m *testing.M) {
	fuzzcorpus.BoundMinimize("250x")
	code := m.Run()
	if bigPath != "" {
		os.RemoveAll(filepath.Dir(bigPath))
	}
	os.Exit(code)
}

// bigCapture is the real modern/multi capture appended 20 times (286,520
// packets, 172 MB): one pcap header, then the records 20 times.
func bigCapture(b *testing.B) string {
	src := realcap.Path(b, "modern/multi/multi.pcap")
	bigOnce.Do(func() {
		data, err := os.ReadFile(src)
		if err != nil {
			b.Fatal(err)
		}
		dir, err := os.MkdirTemp("", "pmdump-bench-")
		if err != nil {
			b.Fatal(err)
		}
		out := append([]byte(nil), data...)
		for range 19 {
			out = append(out, data[24:]...)
		}
		bigPath = filepath.Join(dir, "big.pcap")
		if err := os.WriteFile(bigPath, out, 0o644); err != nil {
			b.Fatal(err)
		}
	})
	return bigPath
}

// benchWork runs the engine over the big capture with the given work; the
// Packets, Difs and Index variants compare what the work costs over
// decoding alone (the target: stats within 3× and the packet index within
// 2× of decoding).
func benchWork(b *testing.B, w engine.Work) {
	path := bigCapture(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		n := 0
		e := engine.New(engine.Config{Work: w, OnEvent: func(ev engine.Event) {
			if _, ok := ev.(engine.PacketEvent); ok {
				n++
			}
		}})
		if err := e.Run(context.Background(), path); err != nil {
			b.Fatal(err)
		}
		e.Close()
		b.ReportMetric(float64(n), "packets")
	}
}

func BenchmarkPackets(b *testing.B) { benchWork(b, 0) }
func BenchmarkDifs(b *testing.B)    { benchWork(b, engine.Difs) }
func BenchmarkIndex(b *testing.B)   { benchWork(b, engine.Index) }

// BenchmarkRedecode decodes random packets of the big capture again from
// the packet index (target: under 50 µs each) and reports the index's
// memory per packet (its entries and whatever it spooled).
func BenchmarkRedecode(b *testing.B) {
	x := bigIndex(b)
	r := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		if _, err := x.Packet(r.IntN(x.Len())); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(x.MemoryBytes()+x.SpoolBytes())/float64(x.Len()), "index-B/packet")
}

// BenchmarkIndexFilter runs a display filter over every packet of the big
// capture's index: each packet read again from the capture file (in large
// reads, as a scan) and decoded.
func BenchmarkIndexFilter(b *testing.B) {
	x := bigIndex(b)
	f := mustFilter(b, "stdf and src == 0")
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if err := x.Filter(context.Background(), f, 0, x.Len(), func(int) bool { n++; return true }); err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			b.Fatal("no keyframe piece")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(x.Len()), "ns/packet")
}

var (
	bigIndexOnce sync.Once
	bigIndexed   *engine.PacketIndex
)

// bigIndex is the packet index of the big capture, made once (its engine
// is left open for the benchmarks that use it).
func bigIndex(b *testing.B) *engine.PacketIndex {
	path := bigCapture(b)
	bigIndexOnce.Do(func() {
		e := engine.New(engine.Config{Work: engine.Index})
		if err := e.Run(context.Background(), path); err != nil {
			b.Fatal(err)
		}
		bigIndexed = e.Index()
	})
	return bigIndexed
}

// BenchmarkTwoSpeeds runs the engine as the TUI does (index, timeline,
// health, findings, an events handler, the rebuild behind the fast pass) over the big capture, or over
// PMDUMP_BENCH_CAPTURE (the one-hour game, say), and reports when the fast
// pass ended (the whole packet list, filters and G work from then on:
// read-s), when the first client's states were all rebuilt (line1-s), when
// every state was (rebuilt-s), and when every state of the client of the
// last packet, asked for first as G in the TUI does, was (cursor-s; not
// asked for first with PMDUMP_BENCH_NO_FIRST=1; PMDUMP_BENCH_CURSOR_ONLY=1
// stops there). PMDUMP_BENCH_FAST_ONLY=1 measures the fast pass alone.
func BenchmarkTwoSpeeds(b *testing.B) {
	path := os.Getenv("PMDUMP_BENCH_CAPTURE")
	if path == "" {
		path = bigCapture(b)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(224 << 20)) // as pmdump tui sets it
	for b.Loop() {
		t0 := time.Now()
		// As the TUI runs it: its events handler keeps the progress and
		// the warnings.
		var events sync.Mutex
		var progress engine.ProgressEvent
		budget, _ := strconv.Atoi(os.Getenv("PMDUMP_BENCH_BUDGET")) // MiB; 0: the engine's default
		e := engine.New(engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings, RebuildBehind: true, MemoryBudget: budget << 20,
			Events: engine.ProgressEvents | engine.WarningEvents,
			OnEvent: func(ev engine.Event) {
				if p, ok := ev.(engine.ProgressEvent); ok {
					events.Lock()
					progress = p
					events.Unlock()
				}
			}})
		if err := e.Run(context.Background(), path); err != nil {
			b.Fatal(err)
		}
		read := time.Since(t0)
		events.Lock()
		_ = progress
		events.Unlock()
		if os.Getenv("PMDUMP_BENCH_FAST_ONLY") != "" { // the fast pass alone; Close stops the rebuild
			e.Close()
			b.ReportMetric(read.Seconds(), "read-s")
			continue
		}
		// G: the last packet's client first.
		x := e.Index()
		last := x.Entry(x.Len() - 1)
		var cursor reassemble.Chain
		for _, l := range e.Progress().Lines {
			if l.Line.Conv == int(last.Conv) {
				cursor = l.Line
			}
		}
		if os.Getenv("PMDUMP_BENCH_NO_FIRST") == "" {
			e.Prioritize(cursor, int(last.N))
		}
		var line1, cur time.Duration
		for e.Rebuilding() {
			p := e.Progress()
			if line1 == 0 && len(p.Lines) > 0 && p.Lines[0].Rebuilt == p.Lines[0].Difs {
				line1 = time.Since(t0)
			}
			for _, l := range p.Lines {
				if cur == 0 && l.Line == cursor && l.Rebuilt == l.Difs {
					cur = time.Since(t0)
				}
			}
			if cur > 0 && os.Getenv("PMDUMP_BENCH_CURSOR_ONLY") != "" {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		all := time.Since(t0)
		if line1 == 0 {
			line1 = all
		}
		if cur == 0 {
			cur = all
		}
		b.ReportMetric(cur.Seconds(), "cursor-s")
		p := e.Progress()
		if f := os.Getenv("PMDUMP_BENCH_HEAP"); f != "" { // what the engine holds at the end, before Close
			writeHeapProfile(b, f)
		}
		e.Close()
		b.ReportMetric(read.Seconds(), "read-s")
		b.ReportMetric(line1.Seconds(), "line1-s")
		b.ReportMetric(all.Seconds(), "rebuilt-s")
		b.ReportMetric(float64(p.Rebuilt), "states")
	}
}

// writeHeapProfile writes a heap profile of what is live now to file.
func writeHeapProfile(b *testing.B, file string) {
	runtime.GC()
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}
