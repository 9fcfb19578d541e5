package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/pmdump/pmdump/engine"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"
)

// drive runs an engine over the inputs: it prints the engine's warnings on
// stderr as they come and, for long work on a terminal, a progress bar. It
// returns the engine (to be closed by the caller) and the run's error:
// inputError when inputs could not be read, and nil engine when none could;
// damagedError when inputs were cut short, the engine holding what came
// before.
// An event handler stops the engine through cfg.Stopper.
func drive(ctx context.Context, stderr io.Writer, cfg engine.Config, inputs []string, progress bool) (*engine.Engine, error) {
	var bar *readBar
	if progress && isTerminal(stderr) {
		bar = newReadBar(stderr)
	}
	next := cfg.OnEvent
	cfg.OnEvent = func(ev engine.Event) {
		switch ev := ev.(type) {
		case engine.WarningEvent:
			if ev.Unreadable {
				fmt.Fprintln(stderr, "pmdump:", ev.Message)
			} else {
				fmt.Fprintln(stderr, "pmdump: warning:", ev.Message)
			}
		case engine.ProgressEvent:
			if bar != nil {
				bar.show(ev)
			}
		}
		if next != nil {
			next(ev)
		}
	}
	e := engine.New(cfg)
	err := e.Run(ctx, inputs...)
	if bar != nil {
		bar.done()
	}
	if ierr := e.Err(); ierr != nil {
		e.Close()
		return nil, internalError{ierr}
	}
	if errors.Is(err, engine.ErrUnreadable) {
		n := len(e.Stats().Unreadable)
		err = inputError{fmt.Errorf("%d of %d inputs could not be read", n, len(inputs))}
		if n == len(inputs) {
			e.Close()
			return nil, err
		}
	}
	if d := e.Damaged(); err == nil && len(d) > 0 {
		err = damagedError{fmt.Errorf("%d of %d inputs are damaged (cut in the middle of a record): the result is what came before the damage", len(d), len(inputs))}
	}
	return e, err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// readBar shows on a terminal how much of the inputs long work has read.
type readBar struct {
	p     *mpb.Progress
	bar   *mpb.Bar
	name  string
	total int64
}

func newReadBar(w io.Writer) *readBar {
	b := &readBar{p: mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(150*time.Millisecond), mpb.WithAutoRefresh())}
	b.bar = b.p.AddBar(0,
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return "reading " + b.name + " " }),
			decor.Counters(decor.SizeB1024(0), "% .1f / % .1f")),
		mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.EwmaETA(decor.ET_STYLE_GO, 30)),
		mpb.BarRemoveOnComplete(),
	)
	return b
}

func (b *readBar) show(ev engine.ProgressEvent) {
	b.name = ev.Input
	if ev.Total > 0 && ev.Total != b.total {
		b.total = ev.Total
		b.bar.SetTotal(ev.Total, false)
	}
	b.bar.EwmaSetCurrent(ev.Read, 100*time.Millisecond)
}

// done takes the bar off the terminal.
func (b *readBar) done() {
	b.bar.Abort(true)
	b.p.Wait()
}
