package engine_test

import (
	"context"
	"io"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/source"
)

// quietSource gives a capture's datagrams, then nothing until closed, as a
// live interface on a network gone quiet.
type quietSource struct {
	engine.Source
	done  atomic.Bool
	quiet chan struct{}
}

func (q *quietSource) Next() (*source.Datagram, error) {
	d, err := q.Source.Next()
	if err == io.EOF {
		q.done.Store(true)
		<-q.quiet
	}
	return d, err
}

// RunLive ticks the engine while the source is quiet, so the states of the
// last difs show before the capture ends, and finishes it at the end.
func TestRunLive(t *testing.T) {
	var want collect
	e := engine.New(engine.Config{Work: engine.States, OnEvent: want.on})
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	e.Close()

	in, err := engine.OpenInput("sample:modern")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	src := &quietSource{Source: in.Reader, quiet: make(chan struct{})}
	var states, ticks atomic.Int64
	e = engine.New(engine.Config{Work: engine.States, OnEvent: func(ev engine.Event) {
		if _, ok := ev.(engine.StateEvent); ok {
			states.Add(1)
		}
	}})
	defer e.Close()
	ran := make(chan error, 1)
	go func() { ran <- e.RunLive(context.Background(), src, 10*time.Millisecond, func() { ticks.Add(1) }) }()
	deadline := time.Now().Add(10 * time.Second)
	for !src.done.Load() || states.Load() < int64(len(want.states)) {
		if time.Now().After(deadline) {
			t.Fatalf("quiet source: %d states shown, want %d", states.Load(), len(want.states))
		}
		time.Sleep(5 * time.Millisecond)
	}
	if e.Progress().Read {
		t.Error("finished before the source ended")
	}
	close(src.quiet)
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	if ticks.Load() == 0 || !e.Progress().Read || states.Load() != int64(len(want.states)) {
		t.Errorf("after the run: %d ticks, finished %v, %d states (want %d)", ticks.Load(), e.Progress().Read, states.Load(), len(want.states))
	}
}

// A handler made before the engine stops it through Config.Stopper: the
// run ends after the datagram it is at.
func TestStopper(t *testing.T) {
	stop := new(engine.Stopper)
	n := 0
	e := engine.New(engine.Config{Stopper: stop, OnEvent: func(ev engine.Event) {
		if _, ok := ev.(engine.PacketEvent); ok {
			if n++; n == 10 {
				stop.Stop()
			}
		}
	}})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	if n != 10 || !e.Stopped() {
		t.Errorf("%d packets, stopped %v; want 10, true", n, e.Stopped())
	}
}

// Ticks from another goroutine while the source is read lose no event: the
// two goroutines that drive a live run share the engine's event list.
func TestTickDuringRun(t *testing.T) {
	var want collect
	e := engine.New(engine.Config{Work: engine.States, OnEvent: want.on})
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	e.Close()
	for run := range 20 {
		in, err := engine.OpenInput("sample:modern")
		if err != nil {
			t.Fatal(err)
		}
		var states atomic.Int64
		e := engine.New(engine.Config{Work: engine.States, OnEvent: func(ev engine.Event) {
			if _, ok := ev.(engine.StateEvent); ok {
				states.Add(1)
			}
		}})
		if err := e.RunLive(context.Background(), in.Reader, time.Microsecond, nil); err != nil {
			t.Fatal(err)
		}
		e.Close()
		in.Close()
		if got := states.Load(); got != int64(len(want.states)) {
			t.Fatalf("run %d: %d states shown, want %d", run, got, len(want.states))
		}
	}
}

// kernelSource is a capture read as a live interface whose kernel counts
// what it received and dropped.
type kernelSource struct {
	engine.Source
	n int
}

func (k *kernelSource) Next() (*source.Datagram, error) {
	k.n++
	return k.Source.Next()
}

func (k *kernelSource) Counters() source.Counters {
	c := k.Source.Counters()
	c.KernelReceived, c.KernelDropped = uint64(k.n+k.n/10), uint64(k.n/10)
	return c
}

// Progress has the kernel's counters of a live source, as Stats has them,
// without the cost of every figure.
func TestProgressKernel(t *testing.T) {
	in, err := engine.OpenInput("sample:modern")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	e := engine.New(engine.Config{})
	defer e.Close()
	src := &kernelSource{Source: in.Reader}
	if err := e.RunLive(context.Background(), src, time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	p, st := e.Progress(), e.Stats()
	if p.KernelDropped != st.KernelDropped || p.KernelReceived != st.KernelReceived || p.KernelDropped != 76 {
		t.Errorf("progress: kernel received %d, dropped %d; stats %d, %d; want 76 dropped (a tenth of 762 reads)", p.KernelReceived, p.KernelDropped, st.KernelReceived, st.KernelDropped)
	}
}
