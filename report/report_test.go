package report_test

import (
	"bytes"
	"context"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/report"
	"github.com/pmdump/pmdump/schema"
)

// built is a capture's report data with the engine that made it (its
// timeline answers as pmdump state does).
type built struct {
	once sync.Once
	d    *report.Data
	e    *engine.Engine
	err  error
}

var (
	buildMu sync.Mutex
	builds  = map[string]*built{}
)

// build runs the collector over the inputs once per test binary.
func build(t testing.TB, inputs ...string) *built {
	t.Helper()
	key := strings.Join(inputs, "\x00")
	buildMu.Lock()
	b := builds[key]
	if b == nil {
		b = &built{}
		builds[key] = b
	}
	buildMu.Unlock()
	b.once.Do(func() {
		c := report.NewCollector()
		b.e = engine.New(c.Configure(engine.Config{}))
		b.err = b.e.Run(context.Background(), inputs...)
		b.d = c.Data(b.e)
	})
	if b.err != nil {
		t.Fatalf("run %v: %v", inputs, b.err)
	}
	return b
}

// realCaptures are the real captures of both eras.
var realCaptures = []string{
	"legacy/basic/capture.pcap",
	"legacy/lossy/capture.pcap",
	"modern/basic/basic.pcap",
	"modern/basic_pcapng/basic.pcapng",
	"modern/multi/multi.pcap",
}

// TestReplayPositionsAreTheStates checks, on every real capture, that the
// replay holds every state each client acknowledged, and that the players'
// positions of 40 states spread over each replay (and the last) are those of the
// state the client held at that frame, read as pmdump state --json reads
// it (engine PickedState and State, gameview.JSON).
func TestReplayPositionsAreTheStates(t *testing.T) {
	t.Parallel()
	for _, rel := range realCaptures {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			b := build(t, realcap.Path(t, rel))
			if len(b.d.Conversations) == 0 {
				t.Fatal("no conversations")
			}
			checked := 0
			for _, cv := range b.d.Conversations {
				r := cv.Replay
				if len(r.T) != cv.Acked || len(r.SLSN) != len(r.T) || len(r.Frame) != len(r.T) {
					t.Fatalf("conv %d: %d acknowledged states, replay arrays of %d, %d, %d", cv.ID, cv.Acked, len(r.SLSN), len(r.Frame), len(r.T))
				}
				if cv.Acked == 0 {
					continue
				}
				for k := 1; k < len(r.T); k++ {
					if r.T[k] < r.T[k-1] {
						t.Fatalf("conv %d: t goes back at entry %d: %v after %v", cv.ID, k, r.T[k], r.T[k-1])
					}
				}
				client := netipOf(t, cv.Client)
				l := reassemble.Chain{Conv: cv.ID, Client: client}
				stride := max(1, len(r.T)/40)
				for k := 0; k < len(r.T); k++ {
					if k%stride != 0 && k != len(r.T)-1 {
						continue
					}
					checkEntry(t, b.e, l, cv, k)
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no state checked")
			}
			t.Logf("%d states checked", checked)
		})
	}
}

// checkEntry compares replay entry k's players with the state the client
// held at its frame.
func checkEntry(t *testing.T, e *engine.Engine, l reassemble.Chain, cv report.Conversation, k int) {
	t.Helper()
	r := cv.Replay
	pick, err := e.Pick(l, int(r.Frame[k]), r.SLSN[k], false)
	if err != nil {
		t.Fatalf("conv %d entry %d: pick slsn %d frame %d: %v", cv.ID, k, r.SLSN[k], r.Frame[k], err)
	}
	if pick.Entry.Frame.N != r.Frame[k] {
		t.Fatalf("conv %d entry %d: the client held frame %d at frame %d", cv.ID, k, pick.Entry.Frame.N, r.Frame[k])
	}
	st, err := e.State(nil, pick.Line, pick.Index)
	if err != nil {
		t.Fatal(err)
	}
	sch := schema.For(len(st))
	pv := sch.View.Players
	js := gameview.JSON(sch, st, pv.Region)[pv.Region].([]any)
	for p := 0; p < len(js) && p < report.MaxPlayers; p++ {
		rec := js[p].(map[string]any)
		active := rec[pv.Active].(float64) != 0
		tr, ok := r.Players[strconv.Itoa(p)]
		if !ok {
			if active {
				t.Fatalf("conv %d entry %d: player %d is active but has no track", cv.ID, k, p)
			}
			continue
		}
		x, y := tr.X.V[k], tr.Y.V[k]
		if !active {
			if !math.IsNaN(x) || !math.IsNaN(y) {
				t.Fatalf("conv %d entry %d: inactive player %d at %v,%v, want null", cv.ID, k, p, x, y)
			}
			continue
		}
		if x != rec[pv.X].(float64) || y != rec[pv.Y].(float64) {
			t.Fatalf("conv %d entry %d (slsn %d frame %d): player %d at %v,%v; the state has %v,%v",
				cv.ID, k, r.SLSN[k], r.Frame[k], p, x, y, rec[pv.X], rec[pv.Y])
		}
	}
}

// TestPageRoundTrip writes the page and reads its data back: the JSON
// contract's fields survive (null positions as NaN), and the page holds
// no reference to anything outside it.
func TestPageRoundTrip(t *testing.T) {
	b := build(t, "sample:modern")
	d := *b.d
	d.Findings = append([]report.Finding{}, report.Finding{Kind: "loss", Severity: "warning", Start: 1.5, End: 2, Conv: 1, Player: 1, Summary: `5 % of "pieces" </script> lost`})
	var buf bytes.Buffer
	if err := report.Write(&buf, &d); err != nil {
		t.Fatal(err)
	}
	page := buf.Bytes()
	got, err := report.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != report.Version || len(got.Conversations) != len(d.Conversations) || len(got.Levels) != len(d.Levels) {
		t.Fatalf("read back version %d, %d conversations, %d levels; wrote %d, %d, %d",
			got.Version, len(got.Conversations), len(got.Levels), d.Version, len(d.Conversations), len(d.Levels))
	}
	if len(got.Findings) != 1 || got.Findings[0].Summary != d.Findings[0].Summary {
		t.Fatalf("findings read back: %+v", got.Findings)
	}
	for i, cv := range d.Conversations {
		g := got.Conversations[i]
		for p, tr := range cv.Replay.Players {
			gt := g.Replay.Players[p]
			for k := range tr.X.V {
				if !same(tr.X.V[k], gt.X.V[k]) || !same(tr.Y.V[k], gt.Y.V[k]) {
					t.Fatalf("conv %d player %s entry %d: wrote %v,%v read %v,%v", cv.ID, p, k, tr.X.V[k], tr.Y.V[k], gt.X.V[k], gt.Y.V[k])
				}
			}
		}
	}
	low := strings.ToLower(string(page))
	for _, bad := range []string{"<script src", "<link rel=\"stylesheet\"", "<img src=\"http", "@import", "url(http", "fetch("} {
		if strings.Contains(low, bad) {
			t.Errorf("the page refers to something outside it: %q", bad)
		}
	}
}

func same(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

// TestThinning makes a long game's replay thin: one state per half
// second per client, and every state within the margin of a finding.
func TestThinning(t *testing.T) {
	path := realcap.Path(t, "modern/basic/basic.pcap")
	full := build(t, path)
	if full.d.Summary.Thinned != "" {
		t.Fatalf("a %.0f s capture was thinned: %s", full.d.Summary.Duration, full.d.Summary.Thinned)
	}
	c := report.NewCollector()
	c.FullDetail = 10 * time.Second
	first := *full.d.Summary.First
	at := 30.0
	c.Extra = []engine.Finding{{Kind: "lag", Severity: engine.SeverityWarning, Start: first.Add(30 * time.Second), End: first.Add(31 * time.Second), Conv: 1, Player: 1, Summary: "lag"}}
	e := engine.New(c.Configure(engine.Config{}))
	if err := e.Run(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	d := c.Data(e)
	if d.Summary.Thinned == "" {
		t.Fatal("not thinned")
	}
	margin := report.FindingMargin.Seconds()
	for i, cv := range d.Conversations {
		all, thin := full.d.Conversations[i].Replay, cv.Replay
		if len(thin.T) == 0 || len(thin.T) >= len(all.T) {
			t.Fatalf("conv %d: %d of %d states kept", cv.ID, len(thin.T), len(all.T))
		}
		kept := map[float64]bool{}
		for _, x := range thin.T {
			kept[x] = true
		}
		// Every finding of this conversation (or of the whole capture)
		// keeps its moments: the injected one and the engine's own.
		nearAny := func(x float64) bool {
			for _, f := range d.Findings {
				end := min(f.End, f.Start+report.FindingSpan.Seconds())
				if (f.Conv == 0 || f.Conv == cv.ID) && x >= f.Start-margin && x <= end+margin {
					return true
				}
			}
			return false
		}
		marks := map[float64]int{}
		for _, x := range all.T {
			near := cv.ID == 1 && x >= at-margin && x <= at+1+margin
			if near && !kept[x] {
				t.Fatalf("conv %d: the state at %v s, near the finding, is not kept", cv.ID, x)
			}
			if kept[x] && !nearAny(x) {
				marks[math.Floor(x/report.ThinEvery.Seconds())]++
			}
		}
		for m, n := range marks {
			if n > 1 {
				t.Fatalf("conv %d: %d states kept in the half second from %v s", cv.ID, n, m*report.ThinEvery.Seconds())
			}
		}
		if len(cv.Things.I) == 0 || len(cv.Things.I) >= len(full.d.Conversations[i].Things.I) {
			t.Fatalf("conv %d: %d snapshots of things thinned from %d", cv.ID, len(cv.Things.I), len(full.d.Conversations[i].Things.I))
		}
	}
}

func netipOf(t *testing.T, s string) netip.AddrPort {
	t.Helper()
	a, err := netip.ParseAddrPort(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
