package tui

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// The large capture of the benchmarks: the real multi-client game read 20
// times over as one capture (286k packets), or PMDUMP_BENCH_CAPTURE (a
// one-hour 8-player synthetic capture, say).
func benchInputs(b *testing.B) []string {
	if p := os.Getenv("PMDUMP_BENCH_CAPTURE"); p != "" {
		return []string{p}
	}
	in := make([]string, 20)
	for i := range in {
		in[i] = realcap.Path(b, "modern/multi/multi.pcap")
	}
	return in
}

var (
	bigOnce sync.Once
	bigEng  *engine.Engine
	bigTook time.Duration
	bigHeap uint64
)

// bigEngine is an engine that has read the large capture.
func bigEngine(b *testing.B) *engine.Engine {
	in := benchInputs(b)
	bigOnce.Do(func() {
		t0 := time.Now()
		bigEng = engine.New(engine.Config{Work: engine.Index | engine.Timeline | engine.Health})
		if err := bigEng.Run(context.Background(), in...); err != nil {
			b.Fatal(err)
		}
		bigTook = time.Since(t0)
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		bigHeap = ms.HeapInuse
	})
	b.Logf("engine read the capture in %v: %d packets, heap in use %d MB", bigTook, bigEng.Index().Len(), bigHeap>>20)
	return bigEng
}

// BenchmarkFirstScreen is the time from starting the program to a first
// screen that shows a screenful of packets, while the engine goes on
// reading the capture.
func BenchmarkFirstScreen(b *testing.B) {
	in := benchInputs(b)
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		m := New(Options{Start: func(ctx context.Context, e *engine.Engine) error { return e.Run(ctx, in...) }})
		m.resize(160, 48)
		done := make(chan struct{})
		go func() { m.opts.Start(m.env.ctx, m.e); close(done) }()
		for m.e.Index().Len() < 48 {
			time.Sleep(100 * time.Microsecond)
		}
		m.refreshAll()
		s := m.Render()
		took := time.Since(t0)
		if len(listRows(s)) == 0 {
			b.Fatalf("no packets on the first screen:\n%s", s)
		}
		b.ReportMetric(float64(took.Microseconds())/1000, "ms/screen")
		m.Close()
		<-done
	}
}

func bigModel(b *testing.B) *Model {
	e := bigEngine(b)
	m := New(Options{Engine: e, Title: "big"})
	drive(b, m, m.Init(), tea.WindowSizeMsg{Width: 160, Height: 48})
	return m
}

// BenchmarkJumpEnd is G in the packet list and the screen after it.
func BenchmarkJumpEnd(b *testing.B) {
	benchKeys(b, bigModel(b), "gG")
}

// BenchmarkJumpPacket is going to a packet number near the end and the
// screen after it.
func BenchmarkJumpPacket(b *testing.B) {
	m := bigModel(b)
	last := m.e.Index().Entry(m.e.Index().Len() - 10).N
	benchKeys(b, m, "g", ":"+strconv.Itoa(int(last))+"<enter>")
}

// benchKeys times the key presses of keys and the screen after them.
func benchKeys(b *testing.B, m *Model, keys ...any) {
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		drive(b, m, keys...)
		_ = m.Render()
	}
}

// BenchmarkJumpFrame is going to a frame of the last level sequence in
// the state view: the state rebuilt, its map drawn and the screen after
// it.
func BenchmarkJumpFrame(b *testing.B) {
	m := bigModel(b)
	drive(b, m, "3G")
	benchKeys(b, m, "g", fmt.Sprintf(":%d:%d<enter>", m.scrub.ent.SLSN, m.scrub.ent.N/2))
}

// BenchmarkKeyPress is one key press on the packet list (down) and the
// screen after it.
func BenchmarkKeyPress(b *testing.B) {
	m := bigModel(b)
	drive(b, m, ":100000<enter>")
	benchKeys(b, m, "j")
}

// BenchmarkRenderMap draws the whole level of a state in color.
func BenchmarkRenderMap(b *testing.B) {
	m := newTest(b, "sample:modern", 160, 48, true)
	drive(b, m, "3")
	ld := m.scrub.loaded
	if ld == nil || ld.lmap == nil {
		b.Fatal("no map loaded")
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		renderMap(ld.lmap, nil, 100, 50, 50, 50, true)
	}
}

// BenchmarkReadToEnd is G pressed as soon as the first packets show, then
// the time until the packet list shows the capture's last packet, with the
// model following the engine as the program does (a refresh and a screen
// every tick) and the engine as the program runs it (the rebuild behind).
// It reports when the list shows the last packet (end-s) and when the
// engine's Run returned (read-s).
func BenchmarkReadToEnd(b *testing.B) {
	in := benchInputs(b)
	for b.Loop() {
		t0 := time.Now()
		m := New(Options{Start: func(ctx context.Context, e *engine.Engine) error { return e.Run(ctx, in...) }})
		m.resize(160, 48)
		ran := make(chan time.Duration, 1)
		go func() { m.opts.Start(m.env.ctx, m.e); ran <- time.Since(t0) }()
		for m.e.Index().Len() < 48 {
			time.Sleep(100 * time.Microsecond)
		}
		drive(b, m, "G")
		var read, end time.Duration
		for end == 0 {
			select {
			case read = <-ran:
				m.env.read = true
			case <-time.After(refresh):
			}
			m.refreshAll()
			m.packets.onGrow(&m.env)
			m.settle()
			_ = m.Render()
			x := m.e.Index()
			if read > 0 && m.packets.pos(m.packets.cur) == x.Len()-1 {
				end = time.Since(t0)
			}
		}
		m.Close()
		b.ReportMetric(end.Seconds(), "end-s")
		b.ReportMetric(read.Seconds(), "read-s")
	}
}
