package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/pmdump/pmdump/engine"
)

// drive runs an engine over the inputs: it prints the engine's warnings on
// stderr as they come and, for long work on a terminal, a progress bar. It
// returns the engine (to be closed by the caller) and the run's error:
// inputError when inputs could not be read, and nil engine when none could.
func drive(ctx context.Context, stderr io.Writer, cfg engine.Config, inputs []string, progress bool) (*engine.Engine, error) {
	var e *engine.Engine
	return driveInto(&e, ctx, stderr, cfg, inputs, progress)
}

// driveInto is drive that sets *ep to the engine before it runs, so the
// event handler can stop it.
func driveInto(ep **engine.Engine, ctx context.Context, stderr io.Writer, cfg engine.Config, inputs []string, progress bool) (*engine.Engine, error) {
	var bar *progressbar.ProgressBar
	if progress && isTerminal(stderr) {
		bar = newBar(stderr)
	}
	next := cfg.OnEvent
	cfg.OnEvent = func(ev engine.Event) {
		switch ev := ev.(type) {
		case engine.WarningEvent:
			if bar != nil {
				bar.Clear()
			}
			if ev.Unreadable {
				fmt.Fprintln(stderr, "pmdump:", ev.Message)
			} else {
				fmt.Fprintln(stderr, "pmdump: warning:", ev.Message)
			}
		case engine.ProgressEvent:
			if bar != nil {
				showProgress(bar, ev)
			}
		}
		if next != nil {
			next(ev)
		}
	}
	e := engine.New(cfg)
	*ep = e
	err := e.Run(ctx, inputs...)
	if bar != nil {
		bar.Finish()
		bar.Clear()
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
	return e, err
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newBar is the progress bar of long work: bytes read of the inputs.
func newBar(w io.Writer) *progressbar.ProgressBar {
	return progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionThrottle(100_000_000),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetPredictTime(true),
	)
}

func showProgress(bar *progressbar.ProgressBar, ev engine.ProgressEvent) {
	if ev.Total > 0 && bar.GetMax64() != ev.Total {
		bar.ChangeMax64(ev.Total)
	}
	bar.Describe("reading " + ev.Input)
	bar.Set64(ev.Read)
}
