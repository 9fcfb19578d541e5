package engine_test

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/synth"
)

// lossOf returns the loss findings of one conversation and direction.
func lossOf(fs []engine.Finding, conv int, c2s bool) []engine.Finding {
	key := "dir_s2c"
	if c2s {
		key = "dir_c2s"
	}
	var out []engine.Finding
	for _, f := range ofKind(fs, engine.KindLoss, conv) {
		if f.Figures[key] == 1 {
			out = append(out, f)
		}
	}
	return out
}

// legacy/lossy: what the protocol proves lost, per client and direction,
// against the impairment's own log of the packets it dropped (one row per
// packet, action DROP; the capture holds what the receivers got). The
// running totals of serr and the sdats never answered give every serr and
// sdak dropped; the re-acknowledgements give some of the staks dropped.
func TestFindingsLossProvenLossy(t *testing.T) {
	dropped := map[[2]string]int{} // client port, packet name
	for _, r := range readCSV(t, realcap.Path(t, "legacy/lossy/impairment_log.csv")) {
		if r[6] != "DROP" {
			continue
		}
		port := r[2] // sport
		if port != "24786" && port != "24787" {
			port = r[3]
		}
		dropped[[2]string{port, r[4]}]++
	}
	_, fs := findingsOf(t, engine.Difs, realcap.Path(t, "legacy/lossy/capture.pcap"))
	// One of a kind is said in the singular ("1 cdat of 2509").
	one := regexp.MustCompile(`\b1 [a-z]+s of `)
	for _, f := range ofKind(fs, engine.KindLoss, 0) {
		if m := one.FindString(f.Summary); m != "" {
			t.Errorf("%q in %s", m, f.Summary)
		}
	}
	for _, port := range []string{"24786", "24787"} {
		t.Run(port, func(t *testing.T) {
			conv := 0
			for _, f := range ofKind(fs, engine.KindJoin, 0) {
				if f.Client.Port() == uint16(atoi(t, port)) {
					conv = f.Conv
				}
			}
			s2c, c2s := lossOf(fs, conv, false), lossOf(fs, conv, true)
			if len(s2c) != 1 || len(c2s) != 1 {
				t.Fatalf("conv %d: loss findings %v %v", conv, s2c, c2s)
			}
			for _, tc := range []struct {
				f       engine.Finding
				figure  string
				name    string
				atLeast int // 0: all of the dropped ones
			}{
				{s2c[0], "serr_lost", "serr", 0},
				{c2s[0], "sdaks_lost", "sdak", 0},
				{c2s[0], "staks_lost", "stak", dropped[[2]string{port, "stak"}] / 2},
			} {
				got, want := int(tc.f.Figures[tc.figure]), dropped[[2]string{port, tc.name}]
				if tc.atLeast == 0 && got != want || tc.atLeast > 0 && (got < tc.atLeast || got > want) {
					t.Errorf("%s: %d proven lost, the impairment dropped %d", tc.figure, got, want)
				}
			}
			// Inputs: only what is proven (two in a row with the same
			// controls), never more than were dropped.
			if got := int(c2s[0].Figures["cdats_lost"]); got > dropped[[2]string{port, "cdat"}] {
				t.Errorf("cdats: %d proven lost, %d dropped", got, dropped[[2]string{port, "cdat"}])
			}
			for _, f := range []engine.Finding{s2c[0], c2s[0]} {
				if f.Severity != engine.SeverityWarning || f.Figures["rate"] <= 0 || f.Figures["rate"] > 0.1 {
					t.Errorf("%v %s", f.Severity, f.Summary)
				}
			}
		})
	}
}

// Bursts of loss on a synthetic game: every ping, pong, pang, sdak and serr
// the bursts dropped is proven lost, for the client they hit, and nothing
// for the other client.
func TestFindingsLossProvenSynth(t *testing.T) {
	for _, tc := range []struct {
		era   decode.Version
		burst synth.Burst // legacy: short and often, for the sdaks of the sdats sent just before
	}{
		{decode.Legacy, synth.Burst{Client: 1, From: 2 * time.Second, Every: 600 * time.Millisecond, Length: 300 * time.Millisecond}},
		{decode.Modern, synth.Burst{Client: 1, From: 2 * time.Second, Every: 1200 * time.Millisecond, Length: 500 * time.Millisecond}},
	} {
		era := tc.era
		t.Run(era.String(), func(t *testing.T) {
			cfg := synth.Config{Era: era, Players: 2, Duration: 18 * time.Second, Seed: 21, LevelChange: -1,
				Faults: synth.Faults{Bursts: []synth.Burst{tc.burst}}}
			path, _, sum := synthGame(t, cfg)
			_, fs := findingsOf(t, engine.Difs, path)
			s2c, c2s := lossOf(fs, 1, false), lossOf(fs, 1, true)
			if len(s2c) != 1 || len(c2s) != 1 {
				t.Fatalf("client 1: loss %v %v", s2c, c2s)
			}
			checks := []struct {
				f      engine.Finding
				figure string
				name   string
			}{
				{c2s[0], "pings_lost", "ping"},
				{s2c[0], "pongs_lost", "pong"},
				{c2s[0], "pangs_lost", "pang"},
			}
			if era == decode.Legacy {
				checks = []struct {
					f      engine.Finding
					figure string
					name   string
				}{
					{c2s[0], "sdaks_lost", "sdak"},
					{s2c[0], "serr_lost", "serr"},
				}
			}
			for i, c := range checks {
				got, want := int(c.f.Figures[c.figure]), sum.LostByName[c.name]
				// A serr is proven lost by a later one, a ping by the next
				// ping: the last one may be dropped after the last proof.
				if got > want || want >= 5 && got < want-1 || i == 0 && want < 5 {
					t.Errorf("%s: %d proven lost, the bursts dropped %d", c.figure, got, want)
				}
			}
			for _, f := range []engine.Finding{s2c[0], c2s[0]} {
				if f.Severity != engine.SeverityWarning {
					t.Errorf("%v %s", f.Severity, f.Summary)
				}
			}
			// Every burst is a window where nothing arrived either way (the
			// last may fall after the client's last packet).
			b := cfg.Faults.Bursts[0]
			bursts := int((cfg.Duration - b.From + b.Every - 1) / b.Every) // the bursts that began in the game
			if got := int(c2s[0].Figures["windows"]); got < bursts-1 || got > bursts || s2c[0].Figures["windows"] != float64(got) {
				t.Errorf("%d windows with nothing arriving (s→c finding: %v), the faults made %d bursts", got, s2c[0].Figures["windows"], bursts)
			}
			if f := c2s[0]; f.Figures["pings_skipped"] != 0 {
				t.Errorf("pings taken for a stall: %s", f.Summary)
			}
			if l := ofKind(fs, engine.KindLoss, 2); len(l) != 0 {
				t.Errorf("client 2 lost nothing: %v", l)
			}
		})
	}
}

// A client that loses the states it holds (the forget fault) acknowledges
// frame 0: its acknowledged frame goes back, once each time it forgot, in
// the window of each, as the injected truth says.
func TestFindingsRewinds(t *testing.T) {
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			cfg := synth.Config{Era: era, Players: 2, Duration: 13 * time.Second, Seed: 4, LevelChange: -1,
				Faults: synth.Faults{Forgets: []synth.Forget{{Client: 2, At: 4 * time.Second, Every: 4 * time.Second}}}}
			path, _, sum := synthGame(t, cfg)
			truth := synth.FaultTruths(cfg, sum)
			if len(truth) != 1 || truth[0].Times < 2 {
				t.Fatalf("truth %+v", truth)
			}
			_, fs := findingsOf(t, engine.Difs, path)
			epoch := synth.Epoch(cfg.Seed)
			rewinds, toZero := 0, 0
			slow := ofKind(fs, engine.KindSlowClient, 2)
			for _, f := range slow {
				rewinds += int(f.Figures["rewinds"])
				toZero += int(f.Figures["rewinds_to_zero"])
				// Each window holds a time the client forgot.
				in := false
				for k := 0; k < truth[0].Times; k++ {
					at := epoch.Add(time.Duration((truth[0].From + float64(k)*truth[0].Every) * float64(time.Second)))
					in = in || !at.Before(f.Start.Add(-time.Second)) && !at.After(f.End.Add(time.Second))
				}
				if !in {
					t.Errorf("%s–%s: %s; no forget in the window", f.Start, f.End, f.Summary)
				}
			}
			if rewinds != truth[0].Times || toZero != truth[0].Times {
				t.Errorf("%d rewinds, %d to frame 0; the client forgot %d times: %v", rewinds, toZero, truth[0].Times, slow)
			}
			for _, f := range ofKind(fs, engine.KindSlowClient, 1) {
				if f.Figures["rewinds"] != 0 {
					t.Errorf("client 1 forgot nothing: %s", f.Summary)
				}
			}
		})
	}
}

// A modern client that stops sending is dropped by the server after 200
// frames without a stak, checked only after frame 300 of a level (the
// game's rule, which synth follows): found from the rebuilt states (the
// player's record cleared, at the frame of the drop in the injected truth)
// and, without states, from the server's difs to it stopping 5.1 s or more
// after its last stak. The stop comes early in the second level: the drop
// waits for its frame 300.
func TestFindingsModernDrop(t *testing.T) {
	cfg := synth.Config{Era: decode.Modern, Players: 2, Duration: 15 * time.Second, Seed: 4, LevelChange: 5 * time.Second,
		Faults: synth.Faults{Stops: []synth.Stop{{Client: 2, At: 5500 * time.Millisecond}}}}
	path, _, sum := synthGame(t, cfg)
	var drop *synth.FaultTruth
	for _, ft := range synth.FaultTruths(cfg, sum) {
		if ft.Kind == "dropped" {
			drop = &ft
		}
	}
	if drop == nil || drop.Player != 2 {
		t.Fatalf("no drop of player 2 in the truth: %+v", synth.FaultTruths(cfg, sum))
	}
	epoch := synth.Epoch(cfg.Seed)
	at := epoch.Add(time.Duration(drop.From * float64(time.Second)))
	for _, tc := range []struct {
		name string
		work engine.Work
	}{
		{"states", engine.Difs | engine.Health},
		{"fast", engine.Difs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fs := findingsOf(t, tc.work, path)
			got := ofKind(fs, engine.KindDropped, 0)
			if len(got) != 1 {
				t.Fatalf("dropped: %v", got)
			}
			f := got[0]
			if f.Severity != engine.SeverityError || f.Player != 2 || f.Client != synth.ClientAddr(2) ||
				!near(f.Start, epoch.Add(5500*time.Millisecond), 3*synth.FrameTime) || !near(f.End, at, 3*synth.FrameTime) {
				t.Errorf("%v player %d %s–%s: %s; want the stop at 5.5 s and the drop at %v s", f.Severity, f.Player, f.Start.Sub(epoch), f.End.Sub(epoch), f.Summary, drop.From)
			}
			if tc.work&engine.Health != 0 {
				if st := f.Evidence.States; len(st) != 1 || st[0].SLSN != drop.SLSN || st[0].Frame < int32(drop.Frame) || st[0].Frame > int32(drop.Frame)+10 {
					t.Errorf("state %v; the server dropped the player at level sequence %d frame %d", st, drop.SLSN, drop.Frame)
				}
			}
			for _, o := range fs {
				if o.Player != 2 && o.Severity > engine.SeverityInfo {
					t.Errorf("%s", o.Summary)
				}
			}
		})
	}
}

// modern/multi: the share of the difs a slow client applied, against the
// clients' ground truth (cN_client_gt.csv: a row per dif applied, keyed by
// level sequence and dst; c1..c3 are the ports 24786..24788): of the difs
// that ended in each slow-client window, those the client applied.
func TestFindingsSlowAppliedMulti(t *testing.T) {
	type key struct {
		conv, slsn int
		dst        int32
	}
	type ended struct {
		key
		at time.Time
	}
	var difs []ended
	e := engine.New(engine.Config{Work: engine.Difs | engine.Findings, OnEvent: func(ev engine.Event) {
		if d, ok := ev.(engine.DifEvent); ok {
			difs = append(difs, ended{key{d.Dif.Conv, d.Dif.SLSN, d.Dif.Dst}, d.Dif.Last})
		}
	}})
	defer e.Close()
	if err := e.Run(context.Background(), realcap.Path(t, "modern/multi/multi.pcap")); err != nil {
		t.Fatal(err)
	}
	fs := e.Findings()
	applied := map[key]bool{}
	convOf := map[uint16]int{}
	for _, f := range ofKind(fs, engine.KindJoin, 0) {
		convOf[f.Client.Port()] = f.Conv
	}
	for c := 1; c <= 3; c++ {
		conv := convOf[uint16(24785+c)]
		for _, r := range readCSV(t, realcap.Path(t, fmt.Sprintf("modern/multi/c%d_client_gt.csv", c))) {
			applied[key{conv, atoi(t, r[3]), int32(atoi(t, r[0]))}] = true
		}
	}
	slow := ofKind(fs, engine.KindSlowClient, 0)
	if len(slow) == 0 {
		t.Fatal("no slow client in modern/multi")
	}
	for _, f := range slow {
		sent, got := 0, 0
		for _, d := range difs {
			if d.conv == f.Conv && !d.at.Before(f.Start) && d.at.Before(f.End) {
				sent++
				if applied[d.key] {
					got++
				}
			}
		}
		// An acknowledgement may come in the second after its dif ended.
		if int(f.Figures["difs"]) != sent || math.Abs(f.Figures["applied"]-float64(got)) > 2 {
			t.Errorf("%s: %v difs, %v applied; the ground truth: %d difs ended in the window, %d applied", f.Summary, f.Figures["difs"], f.Figures["applied"], sent, got)
		}
	}
}

// The legacy server drops a client it got no sdak from for 100 frames and
// says so in its game moves (player state 71), as the game's does: found
// from the sdat entries, for the player and at the frame of the injected
// truth.
func TestFindingsLegacyDrop(t *testing.T) {
	cfg := synth.Config{Era: decode.Legacy, Players: 3, Duration: 12 * time.Second, Seed: 4,
		Faults: synth.Faults{Stops: []synth.Stop{{Client: 2, At: 5 * time.Second}}}}
	path, _, sum := synthGame(t, cfg)
	if len(sum.Drops) != 1 || sum.Drops[0].Player != 2 {
		t.Fatalf("drops %+v", sum.Drops)
	}
	_, fs := findingsOf(t, engine.Difs, path)
	got := ofKind(fs, engine.KindDropped, 0)
	if len(got) != 1 || got[0].Player != 2 || got[0].Severity != engine.SeverityError ||
		got[0].Figures["frame"] != float64(sum.Drops[0].Frame) || got[0].Figures["state"] != 71 {
		t.Errorf("dropped: %v; the server dropped player 2 at frame %d", got, sum.Drops[0].Frame)
	}
}
