package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/synth"
)

// finished is what a run ends with: its findings, sorted as doctor lists
// them, and its health.
type finished struct {
	findings []string
	health   string
	counts   engine.FindingCounts
}

// finishedRun runs an engine over path with cfg to the end (the rebuild
// behind included) and returns its findings and health.
func finishedRun(t *testing.T, cfg engine.Config, path string) finished {
	t.Helper()
	e := engine.New(cfg)
	defer e.Close()
	if err := e.Run(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	e.Wait()
	var r finished
	for _, f := range engine.SortFindings(e.Findings()) {
		fig, _ := json.Marshal(f.Figures)
		r.findings = append(r.findings, fmt.Sprintf("%v %s %s %s %s %d %s %+v", f.Severity, f.Start.Format(time.RFC3339Nano), f.End.Format(time.RFC3339Nano), f.Kind, f.Summary, f.Player, fig, f.Evidence))
	}
	h, err := json.Marshal(e.Health())
	if err != nil {
		t.Fatal(err)
	}
	r.health = string(h)
	if c := e.Stats().Findings; c != nil {
		r.counts = *c
	}
	return r
}

// A run whose states are rebuilt behind the fast pass (as the terminal UI
// runs it) ends with the findings and health of a plain run (as doctor and
// stats --health run it): the findings that need every state (late inputs
// from the states' late_cdats, the levels a level change leads to, the
// players the states show leaving) wait for the rebuild.
func TestRebuildBehindFindingsSame(t *testing.T) {
	sameFindings(t, []findingsCase{
		{"synth modern late inputs, level change", func(t *testing.T) string {
			path, _, _ := synthGame(t, synth.Config{Era: decode.Modern, Players: 2, Duration: 10 * time.Second, Seed: 7})
			return path
		}},
		{"synth modern dropped player", func(t *testing.T) string {
			path, _, _ := synthGame(t, synth.Config{Era: decode.Modern, Players: 3, Duration: 16 * time.Second, Seed: 5, LevelChange: -1,
				Faults: synth.Faults{Stops: []synth.Stop{{Client: 3, At: 8 * time.Second}}}})
			return path
		}},
	})
}

// TestRebuildBehindFindingsSame on every real capture.
func TestRebuildBehindFindingsSameReal(t *testing.T) {
	sameFindings(t, []findingsCase{
		{"legacy/lossy", func(t *testing.T) string { return realcap.Path(t, "legacy/lossy/capture.pcap") }},
		{"legacy/basic", func(t *testing.T) string { return realcap.Path(t, "legacy/basic/capture.pcap") }},
		{"modern/basic", func(t *testing.T) string { return realcap.Path(t, "modern/basic/basic.pcap") }},
		{"modern/multi", func(t *testing.T) string { return realcap.Path(t, "modern/multi/multi.pcap") }},
	})
}

// findingsCase is a capture sameFindings runs both ways.
type findingsCase struct {
	name string
	path func(t *testing.T) string
}

// sameFindings runs each case's capture as doctor does and as the
// terminal UI does, and compares how they end.
func sameFindings(t *testing.T, cases []findingsCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t)
			plain := finishedRun(t, engine.Config{Work: engine.Findings | engine.Health}, path)
			if len(plain.findings) == 0 {
				t.Fatal("no findings")
			}
			tui := finishedRun(t, engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings, RebuildBehind: true}, path)
			if !slices.Equal(tui.findings, plain.findings) {
				for _, f := range plain.findings {
					if !slices.Contains(tui.findings, f) {
						t.Errorf("behind lacks: %s", f)
					}
				}
				for _, f := range tui.findings {
					if !slices.Contains(plain.findings, f) {
						t.Errorf("behind has more: %s", f)
					}
				}
				if !t.Failed() {
					t.Errorf("same findings in another order:\nbehind %q\nplain  %q", tui.findings, plain.findings)
				}
			}
			if tui.counts != plain.counts {
				t.Errorf("finding counts: behind %+v, plain %+v", tui.counts, plain.counts)
			}
			if tui.health != plain.health {
				t.Errorf("health differs:\nbehind %s\nplain  %s", tui.health, plain.health)
			}
		})
	}
}

// While the rebuild behind the fast pass has states of a conversation
// still to count, its health says so (Partial, PendingStates); a
// conversation that is not partial has its final figures; once the
// rebuild has ended none is partial.
func TestRebuildBehindHealthPartial(t *testing.T) {
	path, _, _ := synthGame(t, synth.Config{Era: decode.Modern, Players: 3, Duration: 8 * time.Second, Seed: 7})
	final := map[int]string{}
	for _, h := range healthOf(t, engine.Config{Work: engine.Health}, path, nil) {
		final[h.conv] = h.summary
	}
	var snaps [][]convHealth
	var e *engine.Engine
	cfg := engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings, RebuildBehind: true,
		OnEvent: func(ev engine.Event) {
			if _, ok := ev.(engine.StateEvent); ok && len(snaps) < 50 {
				snaps = append(snaps, healthNow(e)) // on the rebuild's goroutine, one at a time
			}
		}}
	got := healthOf(t, cfg, path, func(en *engine.Engine) { e = en })
	if len(snaps) == 0 {
		t.Fatal("no state event")
	}
	partial := 0
	for _, snap := range snaps {
		for _, h := range snap {
			switch {
			case h.partial != (h.pending > 0):
				t.Errorf("conv %d: partial %v with %d states pending", h.conv, h.partial, h.pending)
			case h.partial:
				partial++
			case h.summary != final[h.conv]:
				t.Errorf("conv %d not partial, but its summary is not the final one:\n%s\nwant %s", h.conv, h.summary, final[h.conv])
			}
		}
	}
	if partial == 0 {
		t.Error("no conversation partial at the first states of the rebuild")
	}
	for _, h := range got {
		if h.partial || h.pending != 0 || h.summary != final[h.conv] {
			t.Errorf("conv %d after the rebuild: partial %v, %d pending, %s, want %s", h.conv, h.partial, h.pending, h.summary, final[h.conv])
		}
	}
}

// convHealth is what TestRebuildBehindHealthPartial compares of a
// conversation's health.
type convHealth struct {
	conv    int
	partial bool
	pending int
	summary string
}

func healthNow(e *engine.Engine) []convHealth {
	var out []convHealth
	for _, h := range e.Health() {
		s, _ := json.Marshal(h.Summary)
		out = append(out, convHealth{conv: h.Conv, partial: h.Partial, pending: h.PendingStates, summary: string(s)})
	}
	return out
}

// healthOf runs an engine to the end and returns its health; made, when
// set, is given the engine before it runs.
func healthOf(t *testing.T, cfg engine.Config, path string, made func(*engine.Engine)) []convHealth {
	t.Helper()
	e := engine.New(cfg)
	defer e.Close()
	if made != nil {
		made(e)
	}
	if err := e.Run(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	e.Wait()
	return healthNow(e)
}
