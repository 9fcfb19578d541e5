package main

import (
	"strconv"
	"strings"
	"testing"
)

// TestDissectorSummaryWithoutTree runs tshark with the dissector the way it
// is run most (summary lines only, so Wireshark builds no tree and the
// dissector takes its fast path) and compares the Info column of every
// packet with pmdump read's line.
func TestDissectorSummaryWithoutTree(t *testing.T) {
	tshark := needTshark(t)
	lua := writeDissector(t)
	caps := []tsharkCapture{
		// (the samples' packets are in the mutated capture, and the plain
		// Lua test runs the samples without a tree too)
		{name: "edge-cases", path: edgeCapture(t)},
		{name: "snap-length", path: snapCapture(t)},
		{name: "mutated", path: mutatedCapture(t)},
		{name: "legacy-lossy", path: "legacy/lossy/capture.pcap", shared: true},
		{name: "modern-multi", path: "modern/multi/multi.pcap", shared: true},
	}
	eachCapture(t, caps, func(t *testing.T, c tsharkCapture, path string) {
		got := tsharkSummaries(t, tshark, lua, path)
		want, lines := readJSONAndText(t, path)
		compareSummaries(t, got, want, lines)
		if !t.Failed() {
			t.Logf("%s: %d summary lines agree", c.path, len(got))
		}
	})
}

// tsharkSummaries runs tshark without a tree on a capture and returns its
// pmnet packets: frame number and Info column.
func tsharkSummaries(t *testing.T, tshark, lua, path string) []map[string][]string {
	t.Helper()
	out := runTshark(t, tshark, "-n", "-X", "lua_script:"+lua, "-r", path,
		"-o", `gui.column.format:"No.","%m","Protocol","%p","Info","%i"`)
	var got []map[string][]string
	for _, l := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		// N PROTOCOL INFO…
		parts := strings.SplitN(strings.TrimLeft(l, " "), " ", 3)
		if len(parts) < 2 || parts[1] != "PMNET" {
			continue
		}
		if len(parts) < 3 {
			t.Fatalf("tshark line %q has no Info column", l)
		}
		got = append(got, map[string][]string{"frame.number": {parts[0]}, "_ws.col.Info": {parts[2]}})
	}
	return got
}

// compareSummaries compares the frame numbers and Info columns of the
// packets a dissector ran without a tree claimed with pmdump read's.
func compareSummaries(t *testing.T, got []map[string][]string, want []readPacket, lines []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("without a tree, the dissector claims %d packets, pmdump read shows %d", len(got), len(want))
	}
	bad := 0
	for i := 0; i < len(got) && i < len(want); i++ {
		n, info := strings.Join(got[i]["frame.number"], " "), strings.Join(got[i]["_ws.col.Info"], " ")
		if n != strconv.Itoa(want[i].N) || info != lines[i] {
			t.Errorf("without a tree: frame %s %q, pmdump frame %d %q", n, info, want[i].N, lines[i])
			if bad++; bad >= 10 {
				t.Fatal("too many differences")
			}
		}
		if len(got[i]) != 2 {
			t.Errorf("without a tree, frame %s has fields added: %v", n, got[i])
		}
	}
}
