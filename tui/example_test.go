package tui_test

import (
	"context"
	"os"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/tui"
)

// Run opens the terminal UI over capture files; Start is what feeds the
// engine, so a live capture gives its own (RunSource on an interface,
// Tick while it is quiet, Finish at the end).
func ExampleRun() {
	opts := tui.Options{
		Title: "game.pcap",
		Color: os.Getenv("NO_COLOR") == "",
		Start: func(ctx context.Context, e *engine.Engine) error {
			return e.Run(ctx, "game.pcap")
		},
	}
	if err := tui.Run(context.Background(), opts); err != nil {
		os.Exit(2)
	}
}
