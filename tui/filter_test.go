package tui

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// ownCtx is a context whose Done channel is its own, so each context
// derived from it with WithCancel waits on a goroutine until it is
// cancelled: a derived context never cancelled shows as a goroutine left.
type ownCtx struct {
	context.Context
	done chan struct{}
}

func (c ownCtx) Done() <-chan struct{} { return c.done }

// Every chunk of a filter releases its context when it is done.
func TestFilterChunksReleaseContexts(t *testing.T) {
	defer func(n int) { filterChunk = n }(filterChunk)
	filterChunk = 20
	m := newTest(t, "sample:modern", 160, 48, false)
	m.env.ctx = ownCtx{context.Background(), make(chan struct{})}
	settle := func() int {
		time.Sleep(20 * time.Millisecond)
		runtime.Gosched()
		return runtime.NumGoroutine()
	}
	before := settle()
	drive(t, m, "/stdf<enter>", "/<ctrl+u>cdat<enter>")
	if !strings.Contains(screen(m), "packets match cdat") {
		t.Fatalf("the filter did not finish:\n%s", screen(m))
	}
	// sample:modern has 761 game packets: about 40 chunks per filter
	if after := settle(); after > before+2 {
		t.Errorf("%d goroutines after two filters, %d before: the chunks' contexts were never cancelled", after, before)
	}
}

// The test harness hears of a panic the UI recovered from.
func TestRecoveredPanicIsReported(t *testing.T) {
	var heard []string
	onRecovered = func(where string, r any) { heard = append(heard, where) }
	defer func() { onRecovered = nil }()
	err := recovered("filter x failed", errors.New("boom"))
	if err.Error() != "filter x failed: boom" || len(heard) != 1 {
		t.Errorf("error %q, heard %v", err, heard)
	}
}

// A filter that matches nothing says which of its names only some packets
// have, as read does.
func TestFilterNoMatchHint(t *testing.T) {
	m := newTest(t, "sample:modern", 200, 48, false)
	drive(t, m, "/n in 100..200<enter>")
	if s := screen(m); !strings.Contains(s, "n is a field of sdat only (the frame number in the capture is num)") {
		t.Errorf("no hint for a filter on sdat's n:\n%s", s)
	}
}
