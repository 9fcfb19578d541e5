package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/synth"
)

// everything is what an engine has found once a run is over: each snapshot
// as JSON, the index's entries and every line's timeline.
type everything struct {
	stats, health, findings, convs, progress string
	index                                    []engine.IndexEntry
	lines                                    map[string][]replay.Entry
}

// runAll runs the capture at path as the terminal UI does (the rebuild
// behind the fast pass, progress and warning events only), with the fast
// pass in two stages or in one, and keeps what it found.
func runAll(t testing.TB, path string, stages int) everything {
	t.Helper()
	defer engine.SetTwoStages(stages)()
	var warnings []string
	e := engine.New(engine.Config{Work: engine.Index | engine.Timeline | engine.Health | engine.Findings | engine.Counts,
		RebuildBehind: true, Events: engine.ProgressEvents | engine.WarningEvents,
		OnEvent: func(ev engine.Event) {
			if w, ok := ev.(engine.WarningEvent); ok {
				warnings = append(warnings, w.Message)
			}
		}})
	defer e.Close()
	err := e.Run(context.Background(), path, path) // twice, as one capture
	e.Wait()
	js := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	r := everything{stats: js(e.Stats()), health: js(e.Health()), findings: js(engine.SortFindings(e.Findings())),
		convs: js(e.Conversations()), progress: js(e.Progress()) + js(warnings) + fmt.Sprint(err), lines: map[string][]replay.Entry{}}
	x := e.Index()
	for i := range x.Len() {
		r.index = append(r.index, x.Entry(i))
	}
	for _, l := range e.Lines() {
		r.lines[l.String()] = e.Entries(nil, l, 0, -1)
	}
	return r
}

// TestTwoStagesSame: the fast pass in two stages (the tracker and the index
// ahead on the reading goroutine) ends with everything the fast pass in one
// stage finds, on real captures and on games where clients leave, change
// level and lose packets.
func TestTwoStagesSame(t *testing.T) {
	cases := []struct {
		name string
		path func(t *testing.T) string
	}{
		{"legacy/lossy", func(t *testing.T) string { return realcap.Path(t, "legacy/lossy/capture.pcap") }},
		{"legacy/basic pcapng", func(t *testing.T) string { return realcap.Path(t, "legacy/basic/capture.pcapng") }},
		{"modern/multi", func(t *testing.T) string { return realcap.Path(t, "modern/multi/multi.pcap") }},
		{"synth modern, a client stops, loss", func(t *testing.T) string {
			path, _, _ := synthGame(t, synth.Config{Era: decode.Modern, Players: 4, Duration: 12 * time.Second, Seed: 3, Loss: 0.02,
				Faults: synth.Faults{Stops: []synth.Stop{{Client: 2, At: 5 * time.Second}}}})
			return path
		}},
		{"synth legacy", func(t *testing.T) string {
			path, _, _ := synthGame(t, synth.Config{Era: decode.Legacy, Players: 3, Duration: 8 * time.Second, Seed: 4, Loss: 0.01})
			return path
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := c.path(t)
			one, two := runAll(t, path, -1), runAll(t, path, 1)
			if len(one.index) == 0 || len(one.lines) == 0 {
				t.Fatalf("%d packets indexed, %d lines: the capture shows nothing to compare", len(one.index), len(one.lines))
			}
			sameEverything(t, one, two)
		})
	}
}

// FuzzTwoStages: on any capture file, the fast pass in two stages ends as
// the fast pass in one does.
func FuzzTwoStages(f *testing.F) {
	for _, cfg := range []synth.Config{
		{Era: decode.Modern, Players: 2, Duration: 1500 * time.Millisecond, Seed: 1, Loss: 0.05},
		{Era: decode.Legacy, Players: 1, Duration: time.Second, Seed: 2},
	} {
		path, _, _ := synthGame(f, cfg)
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "fuzz.pcap")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		sameEverything(t, runAll(t, path, -1), runAll(t, path, 1))
	})
}

// sameEverything fails t where two runs' findings differ.
func sameEverything(t *testing.T, one, two everything) {
	t.Helper()
	for _, f := range []struct{ name, one, two string }{
		{"stats", one.stats, two.stats}, {"health", one.health, two.health}, {"findings", one.findings, two.findings},
		{"conversations", one.convs, two.convs}, {"progress, warnings and error", one.progress, two.progress},
	} {
		if f.one != f.two {
			t.Errorf("%s differ:\none stage  %.600s\ntwo stages %.600s", f.name, f.one, f.two)
		}
	}
	if !reflect.DeepEqual(one.index, two.index) {
		t.Errorf("index: %d entries in one stage, %d in two, or entries differ", len(one.index), len(two.index))
	}
	if !reflect.DeepEqual(one.lines, two.lines) {
		t.Errorf("timeline differs: %d lines in one stage, %d in two", len(one.lines), len(two.lines))
	}
}
