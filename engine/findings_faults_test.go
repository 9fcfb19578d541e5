package engine_test

import (
	"math"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/synth"
)

// Every injected fault is found, for its client, with the injected window.
// The outage is shorter than the 100 frames without a stak after which the
// server drops a client (TestFindingsModernDrop has those).
func TestFindingsInjectedFaults(t *testing.T) {
	const players = 3
	cfg := synth.Config{Era: decode.Modern, Players: players, Duration: 26 * time.Second, Seed: 5, LevelChange: -1,
		Faults: synth.Faults{
			Outages: []synth.Outage{{Client: 2, From: 8 * time.Second, To: 10 * time.Second}},
			Stops:   []synth.Stop{{Client: 3, At: 18 * time.Second}},
			Slow:    []synth.Slow{{Client: 1, FPS: 20, From: 4 * time.Second}},
		}}
	path, truth, sum := synthGame(t, cfg)
	e, fs := findingsOf(t, engine.Difs, path)
	epoch := synth.Epoch(cfg.Seed)
	frame := synth.FrameTime
	for _, f := range fs {
		if f.Kind == engine.KindDesync || f.Kind == engine.KindDropped && f.Player != 3 {
			t.Errorf("unexpected %s", f.Summary)
		}
	}
	// The stopped client 3 is the one the server dropped.
	if len(sum.Drops) != 1 || sum.Drops[0].Player != 3 || len(ofKind(fs, engine.KindDropped, 0)) != 1 {
		t.Errorf("drops %+v, found %v", sum.Drops, ofKind(fs, engine.KindDropped, 0))
	}
	// The outage: nothing either way for client 2, from its start to its
	// end; said once, not again as two silences.
	if n := len(ofKind(fs, engine.KindSilentClient, 2)) + len(ofKind(fs, engine.KindSilentServer, 2)); n != 0 {
		t.Errorf("the outage said again as %d silences", n)
	}
	for _, kind := range []string{engine.KindOutage} {
		got := ofKind(fs, kind, 2)
		if len(got) != 1 {
			t.Fatalf("%s of client 2: %d findings, want 1: %v", kind, len(got), got)
		}
		f := got[0]
		if f.Severity != engine.SeverityInfo || f.Client != synth.ClientAddr(2) || !near(f.Start, epoch.Add(8*time.Second), 2*frame) || !near(f.End, epoch.Add(10*time.Second), 2*frame) {
			t.Errorf("%s: %v %s–%s, want info (under 2.5 s) 8 s–10 s after %s", kind, f.Severity, f.Start, f.End, epoch)
		}
	}
	// The difs lost in the outage, against the server's ground truth: every
	// row sent to player 2 that reached the capture is a dif the table counts.
	sent := 0
	for _, r := range truth.Server {
		if r.Player == 2 {
			sent++
		}
	}
	var seen int
	for _, d := range e.Stats().Difs {
		if d.Conv == 2 {
			seen = d.Difs
		}
	}
	loss := lossOf(fs, 2, false)
	if len(loss) == 0 || loss[0].Figures["lost_whole"] != float64(sent-seen) || loss[0].Figures["difs"] != float64(sent) {
		t.Errorf("loss of client 2: %v; want %d of %d difs lost whole", loss, sent-seen, sent)
	} else if loss[0].Severity != engine.SeverityWarning || loss[0].Figures["longest_dif_run"] < 75 {
		t.Errorf("loss of client 2: %v, longest run %v; want a warning and a run of the outage's ~80 difs", loss[0].Severity, loss[0].Figures["longest_dif_run"])
	}
	// The stop: client 3 silent from 18 s on, while the server sent the
	// difs of the ground truth from then to the drop.
	wasted := 0
	for _, r := range truth.Server {
		if r.Player == 3 && r.Dst >= int32(18*time.Second/frame) {
			wasted++
		}
	}
	stop := ofKind(fs, engine.KindSilentClient, 3)
	if len(stop) != 1 || stop[0].Severity != engine.SeverityError || !near(stop[0].Start, epoch.Add(18*time.Second), 2*frame) ||
		math.Abs(stop[0].Figures["difs"]-float64(wasted)) > 2 {
		t.Errorf("stop of client 3: %v; the server sent %d difs after the stop", stop, wasted)
	}
	// The slow client: 20 fps from 4 s on, a warning.
	slow := ofKind(fs, engine.KindSlowClient, 1)
	if len(slow) != 1 {
		t.Fatalf("slow client 1: %v", slow)
	}
	s := slow[0]
	// The difs it applied, of those sent in its window, as the ground truth
	// has them (rows of the server and of client 1 from the window's first
	// frame on): at 20 frames a second against the server's 40 it applies
	// at most half, the rest are replaced before it applies them.
	from := int32(s.Start.Sub(epoch) / frame)
	sentRows, appliedRows := 0, 0
	for _, r := range truth.Server {
		if r.Player == 1 && r.Dst >= from {
			sentRows++
		}
	}
	for _, r := range truth.Clients[1] {
		if r.Dst >= from {
			appliedRows++
		}
	}
	if want := 100 * float64(appliedRows) / float64(sentRows); math.Abs(s.Figures["applied_pct"]-want) > 3 || want > 50 {
		t.Errorf("slow client 1 applied %.1f %% of its difs, the ground truth %.1f %%: %s", s.Figures["applied_pct"], want, s.Summary)
	}
	if s.Severity != engine.SeverityWarning || math.Abs(s.Figures["min_fps"]-20) > 2 || math.Abs(s.Figures["max_fps"]-20) > 2 ||
		!near(s.Start, epoch.Add(4*time.Second), time.Second) || !near(s.End, epoch.Add(cfg.Duration), time.Second) {
		t.Errorf("slow client 1: %v %s–%s %v", s.Severity, s.Start, s.End, s.Figures)
	}
	// The client that was not touched has nothing above info.
	for _, f := range fs {
		if f.Conv == 0 && f.Severity > engine.SeverityInfo {
			t.Errorf("capture-wide %s", f.Summary)
		}
	}
	if n := len(ofKind(fs, engine.KindJoin, 0)); n != players {
		t.Errorf("%d joins, want %d", n, players)
	}
}

// Bursts of loss and an added delay are found as loss and latency.
func TestFindingsBurstAndDelay(t *testing.T) {
	cfg := synth.Config{Era: decode.Legacy, Players: 2, Duration: 20 * time.Second, Seed: 9,
		Faults: synth.Faults{
			Bursts: []synth.Burst{{Client: 1, From: 4 * time.Second, Every: 2 * time.Second, Length: 600 * time.Millisecond}},
		}}
	path, truth, _ := synthGame(t, cfg)
	e, fs := findingsOf(t, engine.Difs, path)
	// The delay on a modern game (the modern client applies a late dif; the
	// legacy one applies a dif only on its own frame).
	dcfg := synth.Config{Era: decode.Modern, Players: 2, Duration: 10 * time.Second, Seed: 9, LevelChange: -1,
		Faults: synth.Faults{Delays: []synth.Delay{{Client: 2, Add: 170 * time.Millisecond}}}}
	dpath, _, _ := synthGame(t, dcfg)
	de, dfs := findingsOf(t, engine.Difs, dpath)
	sent := 0
	for _, r := range truth.Server {
		if r.Player == 1 {
			sent++
		}
	}
	var seen int
	var ack2 engine.Quantiles
	for _, d := range e.Stats().Difs {
		if d.Conv == 1 {
			seen = d.Difs
		}
	}
	for _, d := range de.Stats().Difs {
		if d.Conv == 2 {
			ack2 = d.AckMs
		}
	}
	loss := lossOf(fs, 1, false)
	if len(loss) != 1 || loss[0].Severity != engine.SeverityWarning || loss[0].Figures["difs_lost"] != float64(sent-seen) || loss[0].Figures["difs"] != float64(sent) {
		t.Errorf("burst loss of client 1: %v; want a warning, %d of %d difs lost", loss, sent-seen, sent)
	}
	if len(ofKind(fs, engine.KindLoss, 2)) != 0 {
		t.Errorf("loss found for client 2, which lost nothing: %v", ofKind(fs, engine.KindLoss, 2))
	}
	lat := ofKind(dfs, engine.KindLatency, 2)
	// The capture is at the sender: a dif reaches the client the delay late, and its stak is seen when sent.
	if len(lat) != 1 || lat[0].Severity != engine.SeverityWarning || lat[0].Figures["median_ms"] < 170 || lat[0].Figures["median_ms"] > 210 ||
		lat[0].Figures["median_ms"] != ack2.Median {
		t.Errorf("latency of client 2: %v; want a warning near 170 ms, the table's median %v", lat, ack2.Median)
	}
	if l1 := ofKind(dfs, engine.KindLatency, 1); len(l1) != 1 || l1[0].Severity != engine.SeverityInfo {
		t.Errorf("latency of client 1: %v; want info", l1)
	}
}

// The server that stops sending to one client is found as silent-server for
// that client, from the stop to the capture's end, in both eras.
func TestFindingsSilentServer(t *testing.T) {
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			cfg := synth.Config{Era: era, Players: 2, Duration: 14 * time.Second, Seed: 11, LevelChange: -1,
				Faults: synth.Faults{Mutes: []synth.Mute{{Client: 2, At: 6 * time.Second}}}}
			path, _, sum := synthGame(t, cfg)
			if sum.FaultDrops["mute 2"] == 0 {
				t.Fatalf("the mute dropped nothing: %v", sum.FaultDrops)
			}
			_, fs := findingsOf(t, engine.Difs, path)
			epoch := synth.Epoch(cfg.Seed)
			got := ofKind(fs, engine.KindSilentServer, 2)
			if len(got) != 1 {
				t.Fatalf("silent-server of client 2: %d findings, want 1: %v", len(got), fs)
			}
			f := got[0]
			frame := synth.FrameTime
			if f.Severity != engine.SeverityError || !near(f.Start, epoch.Add(6*time.Second), 2*frame) ||
				!near(f.End, epoch.Add(cfg.Duration), 8*frame) || f.Figures["packets"] < 40 {
				t.Errorf("silent-server: %v %s–%s %v, want an error from 6 s to 14 s after %s", f.Severity, f.Start, f.End, f.Figures, epoch)
			}
			// The client itself kept sending: no silent-client, and client 1
			// was not touched.
			if n := len(ofKind(fs, engine.KindSilentClient, 2)); n != 0 {
				t.Errorf("%d silent-client findings for the muted client", n)
			}
			for _, f := range fs {
				if f.Conv == 1 && f.Severity > engine.SeverityInfo {
					t.Errorf("client 1: %s", f.Summary)
				}
			}
		})
	}
}
