package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
)

func multiCapture(t *testing.T) string {
	p := filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap")
	mustExist(t, p)
	return p
}

func TestStateInGameTerms(t *testing.T) {
	t.Parallel()
	path := multiCapture(t)
	dump, _ := os.ReadFile(filepath.Join(sharedCaptures, "modern", "multi", "c1_states", "state_1319_slsn1.bin"))
	f32 := func(off int) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(dump[off:]))) }
	// psyn[1].x and .y: record 1 of 288 bytes, fields 15 and 16 (protocol.md).
	x, y := f32(288+60), f32(288+64)

	out, errs, code := pmdump("state", path, "--player", "1", "--frame", "1319")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, want := range []string{"Players", "Enemies (", "Items (", "Lifts (", "Shots pshot", "schema modern-112384"} {
		if !strings.Contains(out, want) {
			t.Errorf("state output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "\n  1       "+gameview.Num(x)+" ") {
		t.Errorf("player 1's row does not show x %s:\n%s", gameview.Num(x), out)
	}

	out, errs, code = pmdump("state", path, "--player", "1", "--frame", "1319", "--json", "--region", "psyn")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var obj struct {
		Frame   int
		Schema  string
		Regions map[string][]map[string]float64
	}
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatal(err)
	}
	p1 := obj.Regions["psyn"][1]
	if obj.Frame != 1319 || p1["x"] != x || p1["y"] != y || p1["active"] != 1 || len(obj.Regions) != 1 {
		t.Errorf("json: frame %d, psyn[1] x %v y %v active %v, %d regions; want 1319, %v %v 1, 1",
			obj.Frame, p1["x"], p1["y"], p1["active"], len(obj.Regions), x, y)
	}

	_, errs, code = pmdump("state", path, "--player", "1", "--frame", "1319", "--region", "nope")
	if code != 1 || !strings.Contains(errs, "no region") {
		t.Errorf("unknown region: exit %d %q", code, errs)
	}
}

func TestDiffCommand(t *testing.T) {
	t.Parallel()
	path := multiCapture(t)
	out, errs, code := pmdump("diff", path, "--player", "1", "--json", "1300", "1319")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	regions := map[string]int{}
	moved := false
	for sc.Scan() {
		var c map[string]any
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%v: %s", err, sc.Text())
		}
		for _, k := range []string{"region", "index", "field", "old", "new"} {
			if _, ok := c[k]; !ok {
				t.Fatalf("change without %q: %s", k, sc.Text())
			}
		}
		regions[c["region"].(string)]++
		if c["region"] == "psyn" && c["index"].([]any)[0].(float64) == 1 && (c["field"] == "x" || c["field"] == "y") {
			moved = true
		}
		if c["old"] == c["new"] {
			t.Errorf("a change that changes nothing: %s", sc.Text())
		}
	}
	if !moved || regions["psyn"] == 0 || regions["Ei"] == 0 {
		t.Errorf("player 1 moving between 1300 and 1319 not shown: %v", regions)
	}

	out, _, code = pmdump("diff", path, "--player", "1", "1319", "1319")
	if code != 0 || !strings.Contains(out, "0 changed values") {
		t.Errorf("a frame with itself: exit %d\n%s", code, out)
	}

	out, errs, code = pmdump("diff", path, "--all-players", "1319")
	if code != 0 || strings.Count(out, "diff 127.0.0.1:24786") != 2 {
		t.Errorf("--all-players: exit %d %s\n%s", code, errs, out)
	}
}

func TestHealthReport(t *testing.T) {
	t.Parallel()
	for _, path := range []string{multiCapture(t), filepath.Join(sharedCaptures, "legacy", "lossy", "capture.pcap")} {
		out, errs, code := pmdump("stats", "--health", "--json", path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		var rep engine.Stats
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Health) != len(rep.Convs) {
			t.Fatalf("%s: health for %d clients, %d conversations", path, len(rep.Health), len(rep.Convs))
		}
		for i, h := range rep.Health {
			c := rep.Convs[i]
			counts := map[string]int{}
			for _, n := range c.ByName {
				counts[n.Type] += n.Packets
			}
			var inputs, acks, late, difs, resets int
			last := -1
			for _, s := range h.Seconds {
				if s.T <= last {
					t.Errorf("%s: seconds out of order", h.Client)
				}
				last = s.T
				inputs += s.Inputs
				acks += s.Acks
				late += s.LateInputs
				difs += s.Difs
				resets += s.BaseResets
			}
			if inputs != counts["cdat"] || acks != counts["stak"] {
				t.Errorf("%s: %d inputs and %d acks over the seconds, %d cdat and %d stak sent", h.Client, inputs, acks, counts["cdat"], counts["stak"])
			}
			if counts["serr"] > 0 && late != counts["serr"] {
				t.Errorf("%s: %d late inputs, %d serr", h.Client, late, counts["serr"])
			}
			// One definition of difs and base resets for the table and the
			// health series (the server's ground truth counts these).
			if difs != rep.Difs[i].Difs || resets != rep.Difs[i].BaseResets || h.Summary.Difs != difs || h.Summary.BaseResets != resets {
				t.Errorf("%s: %d difs and %d base resets over the seconds (summary %d, %d), %d and %d in the dif table", h.Client, difs, resets,
					h.Summary.Difs, h.Summary.BaseResets, rep.Difs[i].Difs, rep.Difs[i].BaseResets)
			}
			if counts["ping"] > 0 && (h.Summary.MeanPongPangMs == nil || *h.Summary.MeanPongPangMs <= 0) {
				t.Errorf("%s: no round-trip time from %d pings", h.Client, counts["ping"])
			}
		}
	}
}
