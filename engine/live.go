package engine

import (
	"context"
	"time"
)

// RunLive runs the engine on a live source (an interface, say) until the
// source ends (close it from another goroutine to end the run: it gives
// what it has captured, then ends), ctx is done or Stop is called. While it
// runs, a ticker moves the engine on every interval (Tick), so a quiet
// network still ends its difs and shows its last states, and calls
// afterTick, when set, after each tick (a front end flushes its output
// there). At the end it finishes the analysis (Finish).
func (e *Engine) RunLive(ctx context.Context, src Source, every time.Duration, afterTick func()) error {
	if every <= 0 {
		every = 250 * time.Millisecond
	}
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				e.Tick(now)
				if afterTick != nil {
					afterTick()
				}
			}
		}
	}()
	err := e.RunSource(ctx, src)
	close(stop)
	<-ticked
	e.Finish()
	return err
}
