package engine_test

import (
	"context"
	"encoding/csv"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/synth"
)

// findingsOf runs the findings over captures.
func findingsOf(t *testing.T, work engine.Work, paths ...string) (*engine.Engine, []engine.Finding) {
	t.Helper()
	e := engine.New(engine.Config{Work: work | engine.Findings})
	t.Cleanup(func() { e.Close() })
	if err := e.Run(context.Background(), paths...); err != nil {
		t.Fatal(err)
	}
	return e, e.Findings()
}

func ofKind(fs []engine.Finding, kind string, conv int) []engine.Finding {
	var out []engine.Finding
	for _, f := range fs {
		if f.Kind == kind && (conv == 0 || f.Conv == conv) {
			out = append(out, f)
		}
	}
	return out
}

// synthGame writes a synthetic game with faults and returns its capture
// and ground truth.
func synthGame(t testing.TB, cfg synth.Config) (string, *synth.Truth, *synth.Summary) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "game.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cw, err := synth.NewCaptureWriter(f, synth.Pcap)
	if err != nil {
		t.Fatal(err)
	}
	truth := synth.NewTruth(cfg)
	sum, err := synth.Generate(cfg, cw, truth)
	if err != nil {
		t.Fatal(err)
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, truth, sum
}

// near reports whether a finding's time is within tol of the injected one.
func near(got, want time.Time, tol time.Duration) bool {
	d := got.Sub(want)
	return d >= -tol && d <= tol
}

// The clean real captures: nothing above info, every join, and the level
// change of the modern ones (slsn 1, the server's ground truth).
func TestFindingsCleanCaptures(t *testing.T) {
	for _, tc := range []struct {
		path   string
		joins  int
		levels int
	}{
		{"legacy/basic/capture.pcap", 1, 0},
		{"legacy/basic/capture.pcapng", 1, 0},
		{"modern/basic/basic.pcap", 1, 1},
		{"modern/basic_pcapng/basic.pcapng", 1, 1},
		{"modern/multi/multi.pcap", 3, 1},
	} {
		t.Run(tc.path, func(t *testing.T) {
			_, fs := findingsOf(t, engine.Difs, realcap.Path(t, tc.path))
			for _, f := range fs {
				if f.Severity > engine.SeverityInfo {
					t.Errorf("%s %s: %s", f.Severity, f.Kind, f.Summary)
				}
				// Nothing was lost in these games: nothing is proven lost.
				if f.Kind == engine.KindLoss && f.Figures["lost"] != 0 {
					t.Errorf("loss on a clean capture: %s", f.Summary)
				}
			}
			if n := len(ofKind(fs, engine.KindJoin, 0)); n != tc.joins {
				t.Errorf("%d joins, want %d", n, tc.joins)
			}
			lv := ofKind(fs, engine.KindLevelChange, 0)
			if len(lv) != tc.levels || tc.levels > 0 && lv[0].Figures["slsn"] != 1 {
				t.Errorf("level changes %v, want %d to slsn 1", lv, tc.levels)
			}
		})
	}
}

// legacy/lossy: the difs lost whole are the server's rows missing from the
// capture (11 and 10, MANIFEST: 21 stdf sends whose only piece was
// dropped), the late inputs are the serr, and the player whose delay shows
// most has a latency warning.
func TestFindingsLossy(t *testing.T) {
	e, fs := findingsOf(t, engine.Difs|engine.Counts, realcap.Path(t, "legacy/lossy/capture.pcap"))
	rows := map[int]int{}        // the server's ground truth, per player
	sentDst := map[[2]int]bool{} // player, dst
	for _, r := range readCSV(t, realcap.Path(t, "legacy/lossy/server/server_stdf_gt.csv")) {
		rows[atoi(t, r[0])]++
		sentDst[[2]int{atoi(t, r[0]), atoi(t, r[2])}] = true
	}
	st := e.Stats()
	for _, d := range st.Difs {
		p := *d.Player
		loss := lossOf(fs, d.Conv, false)
		if len(loss) != 1 {
			t.Fatalf("conv %d: loss findings %v", d.Conv, loss)
		}
		f := loss[0]
		if f.Figures["difs"] != float64(rows[p]) || f.Figures["lost_whole"] != float64(rows[p]-d.Difs) || f.Figures["incomplete"] != float64(d.Incomplete) ||
			f.Severity != engine.SeverityWarning {
			t.Errorf("player %d: %s; ground truth %d difs sent, %d in the capture, %d incomplete", p, f.Summary, rows[p], d.Difs, d.Incomplete)
		}
		// The game frames of the difs lost whole are difs the server sent.
		if len(f.Evidence.Frames) == 0 {
			t.Errorf("player %d: no lost game frames", p)
		}
		for _, r := range f.Evidence.Frames {
			if !sentDst[[2]int{p, int(r.From)}] || !sentDst[[2]int{p, int(r.To)}] || r.SLSN != 0 {
				t.Errorf("player %d: lost frames %+v are not difs the server sent", p, r)
			}
		}
		lat := ofKind(fs, engine.KindLatency, d.Conv)
		if len(lat) != 1 || lat[0].Figures["p95_ms"] != d.AckMs.P95 || lat[0].Figures["median_ms"] != d.AckMs.Median {
			t.Errorf("player %d latency %v; the table's %+v", p, lat, d.AckMs)
		} else if want := d.AckMs.P95 > engine.LatencyWarnMs; (lat[0].Severity == engine.SeverityWarning) != want {
			t.Errorf("player %d latency %v with p95 %.1f ms", p, lat[0].Severity, d.AckMs.P95)
		}
	}
	for _, c := range st.Convs {
		serr := 0
		for _, n := range c.ByName {
			if n.Type == "serr" {
				serr += n.Packets
			}
		}
		// The late inputs are the serr's running total: those that
		// arrived and those proven lost (the game's log says the same:
		// TestLegacyFiguresAgainstGameLog).
		late := ofKind(fs, engine.KindLateInputs, c.ID)
		lostSerr := 0.0
		if l := lossOf(fs, c.ID, false); len(l) == 1 {
			lostSerr = l[0].Figures["serr_lost"]
		}
		if len(late) != 1 || late[0].Figures["late"] != float64(serr)+lostSerr || lostSerr == 0 || late[0].Severity != engine.SeverityWarning {
			t.Errorf("conv %d: late inputs %v, %d serr and %v lost", c.ID, late, serr, lostSerr)
		}
	}
	if n := len(ofKind(fs, engine.KindJoin, 0)); n != 2 {
		t.Errorf("%d joins, want 2", n)
	}
}

// The silence of modern/basic (the client acknowledged nothing for a second
// while the server sent keyframes) is found, as info, with its window.
func TestFindingsSilenceRealCapture(t *testing.T) {
	e, fs := findingsOf(t, engine.Difs|engine.Health, realcap.Path(t, "modern/basic/basic.pcap"))
	sil := ofKind(fs, engine.KindSilentClient, 1)
	if len(sil) != 1 {
		t.Fatalf("silences %v", sil)
	}
	f := sil[0]
	first := *e.Stats().First
	// The health series has the second without a single ack.
	var quiet []int
	for _, s := range e.Health()[0].Seconds {
		if s.Acks == 0 && s.Difs > 0 {
			quiet = append(quiet, s.T)
		}
	}
	sec := time.Duration(quiet[0]) * time.Second
	if len(quiet) != 1 || f.Start.Sub(first) < sec || f.Start.Sub(first) >= sec+time.Second || f.End.Sub(first) < sec+time.Second {
		t.Errorf("silence %s–%s after the first packet; seconds without acks %v", f.Start.Sub(first), f.End.Sub(first), quiet)
	}
	if f.Severity != engine.SeverityInfo || f.Figures["keyframes"] == 0 {
		t.Errorf("silence: %v %s", f.Severity, f.Summary)
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows[1:] // the header
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// modern/multi: c3 (port 24788) is the idle client and every file the
// server sent is found (MANIFEST: 27 sfil, 6 sfak).
func TestFindingsMulti(t *testing.T) {
	_, fs := findingsOf(t, engine.Difs, realcap.Path(t, "modern/multi/multi.pcap"))
	idle := ofKind(fs, engine.KindIdleClient, 0)
	if len(idle) != 1 || idle[0].Client.Port() != 24788 {
		t.Errorf("idle clients %v, want the one on port 24788", idle)
	}
	pieces, acked := 0, 0
	for _, f := range ofKind(fs, engine.KindFileTransfer, 0) {
		pieces += int(f.Figures["pieces"])
		acked += int(f.Figures["acked"])
		if s := f.Figures["file_size"]; s != 9175 && s != 13443 && s != 22490 {
			t.Errorf("file of %v bytes: %s", s, f.Summary)
		}
	}
	if pieces != 27 || acked != 6 {
		t.Errorf("%d sfil pieces in the transfers, %d acknowledged; want 27 and 6", pieces, acked)
	}
}

// With the states rebuilt, a level change names the level (modern/basic:
// slsn 1 is level 64, the server's ground truth).
func TestFindingsLevelNumber(t *testing.T) {
	_, fs := findingsOf(t, engine.Health, realcap.Path(t, "modern/basic/basic.pcap"))
	want := -1
	for _, r := range readCSV(t, realcap.Path(t, "modern/basic/server_gt.csv")) {
		if r[6] == "1" {
			want = atoi(t, r[7])
		}
	}
	lv := ofKind(fs, engine.KindLevelChange, 0)
	if len(lv) != 1 || lv[0].Figures["level"] != float64(want) {
		t.Errorf("level changes %v, want one to level %d", lv, want)
	}
}

// cutWriter writes datagrams until the second piece of the first dif of
// several pieces, and nothing after it: a capture that ends mid-dif.
type cutWriter struct {
	w    *synth.CaptureWriter
	done bool
}

func (c *cutWriter) WriteDatagram(ts time.Time, src, dst netip.AddrPort, payload []byte) error {
	if c.done {
		return nil
	}
	// modern stdf: seq at byte 12, count at 13
	if len(payload) > 14 && string(payload[:4]) == "stdf" && payload[13] > 2 && payload[12] == 1 {
		c.done = true
	}
	return c.w.WriteDatagram(ts, src, dst, payload)
}

// Two games read together (legacy/basic then modern/basic, one client
// endpoint) are told apart; a capture that ends in the middle of a dif
// says so, and its missing pieces are not counted as lost.
func TestFindingsCaptureProblems(t *testing.T) {
	_, fs := findingsOf(t, engine.Difs, realcap.Path(t, "legacy/basic/capture.pcap"), realcap.Path(t, "modern/basic/basic.pcap"))
	if sh := ofKind(fs, engine.KindSharedEndpoint, 2); len(sh) != 1 || sh[0].Severity != engine.SeverityWarning || len(ofKind(fs, engine.KindRejoin, 0)) != 0 {
		t.Errorf("two games: %v", sh)
	}
	path := filepath.Join(t.TempDir(), "cut.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cw, err := synth.NewCaptureWriter(f, synth.Pcap)
	if err != nil {
		t.Fatal(err)
	}
	cut := &cutWriter{w: cw}
	if _, err := synth.Generate(synth.Config{Era: decode.Modern, Players: 1, Duration: 2 * time.Second, Seed: 3}, cut, nil); err != nil {
		t.Fatal(err)
	}
	if err := cw.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if !cut.done {
		t.Fatal("no dif of several pieces to cut")
	}
	_, fs = findingsOf(t, engine.Difs, path)
	if end := ofKind(fs, engine.KindCaptureEnd, 1); len(end) != 1 || len(ofKind(fs, engine.KindLoss, 1)) != 0 {
		t.Errorf("cut capture: %v; loss %v", end, ofKind(fs, engine.KindLoss, 1))
	}
}

// A capture cut by the snap length says so, with the frames cut, and its
// cut pieces are not taken for loss.
func TestFindingsSnapLength(t *testing.T) {
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	snap(t, realcap.Path(t, "modern/basic/basic.pcap"), cut, 120)
	e, fs := findingsOf(t, engine.Difs, cut)
	sl := ofKind(fs, engine.KindSnapLength, 0)
	if st := e.Stats(); len(sl) != 1 || sl[0].Severity != engine.SeverityWarning || sl[0].Figures["frames"] != float64(st.Truncated) || st.Truncated == 0 {
		t.Errorf("snap length findings %v; %d frames truncated", sl, st.Truncated)
	}
	for _, f := range ofKind(fs, engine.KindLoss, 0) {
		if f.Figures["dir_s2c"] == 1 {
			t.Errorf("cut pieces taken for loss: %s", f.Summary)
		}
	}
}

// The legacy quits are the server's game-move list's "player state 64"
// entries (its .gm file: count, three settings, then frame, type, data1,
// data2 per entry) that reached a client in an sdat.
func TestFindingsLegacyQuit(t *testing.T) {
	for _, tc := range []struct{ capture, moves string }{
		{"legacy/basic/capture.pcap", "legacy/basic/server/game_moves_bad_exit_20261121-234218-lev4.gm"},
		{"legacy/lossy/capture.pcap", "legacy/lossy/server/game_moves_bad_exit_20261121-235145-lev4.gm"},
	} {
		b, err := os.ReadFile(realcap.Path(t, tc.moves))
		if err != nil {
			t.Fatal(err)
		}
		var v []int
		for _, f := range strings.Fields(string(b)) {
			v = append(v, atoi(t, f))
		}
		quits := map[[2]int]bool{} // player, frame
		for i := 4; i+4 <= len(v); i += 4 {
			if v[i+1] == 1 && v[i+3] == 64 {
				quits[[2]int{v[i+2], v[i]}] = true
			}
		}
		_, fs := findingsOf(t, engine.Difs, realcap.Path(t, tc.capture))
		leaves := ofKind(fs, engine.KindLeave, 0)
		if len(leaves) != 1 || len(ofKind(fs, engine.KindDropped, 0)) != 0 {
			t.Errorf("%s: leaves %v", tc.capture, leaves)
		}
		for _, f := range leaves {
			if k := [2]int{f.Player, int(f.Figures["frame"])}; !quits[k] {
				t.Errorf("%s: %s is not in the game-move list's quits %v", tc.capture, f.Summary, quits)
			}
		}
	}
}
