package main

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// The dissector on every wire version: a synthetic game of each (pmdump
// synth), which the real captures do not all have.

// synthVersion writes a short synthetic game of version v (two clients, a
// level change half-way, a little loss) and returns its path.
func synthVersion(t *testing.T, v decode.Version) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), v.String()+".pcap")
	var stderr bytes.Buffer
	args := []string{"synth", "-o", path, "--era", v.String(), "--players", "2", "--duration", "2s", "--seed", "11", "--loss", "0.02", "--no-truth"}
	if code := run(args, &bytes.Buffer{}, &stderr); code != exitOK {
		t.Fatalf("pmdump %v: exit %d: %s", args, code, stderr.String())
	}
	return path
}

// TestDissectorEveryVersion compares the dissector with pmdump read on a
// synthetic game of every version, field by field and version included,
// with the difs reassembled; then, with the difs inflated, the version it
// shows once a conversation's first dif told the size of its states: the
// one pmdump finds from that size (pmdump stats, whose engine inflates a
// dif of each conversation), where pmdump read, which inflates none, goes
// on with the likeliest of the versions the packets allow.
func TestDissectorEveryVersion(t *testing.T) {
	tshark := needTshark(t)
	lua := writeDissector(t)
	for _, v := range decode.Versions() {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			path := synthVersion(t, v)
			n := compareWithTshark(t, tshark, lua, path, difsReassembled)
			compareStateSizeVersions(t, tshark, lua, path, v)
			if !t.Failed() {
				t.Logf("%s: %d packets agree", v, n)
			}
		})
	}
}

// compareStateSizeVersions runs tshark with the difs inflated and checks
// the version of every packet: pmdump read's up to the frame whose dif
// first inflated in its conversation, then the conversation's version as
// pmdump stats tells it from the state size, which must be want.
func compareStateSizeVersions(t *testing.T, tshark, lua, path string, want decode.Version) {
	t.Helper()
	got := tsharkPackets(t, tshark, "-n", "-X", "lua_script:"+lua, "-o", "pmnet.inflate:TRUE", "-r", path, "-Y", "pmnet",
		"-T", "json", "-e", "frame.number", "-e", "pmnet.era", "-e", "pmnet.dif.inflated")
	var js, stderr bytes.Buffer
	if code := run([]string{"read", "--json", path}, &js, &stderr); code != exitOK {
		t.Fatalf("pmdump read --json: exit %d: %s", code, stderr.String())
	}
	var read []struct {
		N      int    `json:"num"`
		Era    string `json:"era"`
		Client string `json:"client"`
	}
	for dec := json.NewDecoder(&js); dec.More(); {
		var p struct {
			N      int    `json:"num"`
			Era    string `json:"era"`
			Client string `json:"client"`
		}
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		read = append(read, p)
	}
	js.Reset()
	if code := run([]string{"stats", "--json", path}, &js, &stderr); code != exitOK {
		t.Fatalf("pmdump stats --json: exit %d: %s", code, stderr.String())
	}
	var stats struct {
		Conversations []struct {
			Client, Era string
		}
	}
	if err := json.Unmarshal(js.Bytes(), &stats); err != nil {
		t.Fatal(err)
	}
	sized := map[string]string{} // client -> version from the state size
	for _, c := range stats.Conversations {
		if c.Era != want.String() {
			t.Errorf("pmdump stats: conversation of %s is of version %s, want %s", c.Client, c.Era, want)
		}
		sized[c.Client] = c.Era
	}
	if len(got) != len(read) {
		t.Fatalf("with the difs inflated, tshark shows %d pmnet packets, pmdump read %d", len(got), len(read))
	}
	inflated := map[string]bool{} // clients whose states' size the dissector learnt
	learnt := 0
	for i, p := range read {
		l := got[i].Source.Layers
		if f := l["frame.number"]; len(f) != 1 || f[0] != strconv.Itoa(p.N) {
			t.Fatalf("tshark frame %v, pmdump %d", f, p.N)
		}
		w := p.Era
		if inflated[p.Client] {
			w = sized[p.Client]
		}
		if e := l["pmnet.era"]; len(e) != 1 || e[0] != w {
			t.Errorf("frame %d: dissector version %v, want %s (pmdump read %s)", p.N, e, w, p.Era)
		}
		if l["pmnet.dif.inflated"] != nil && !inflated[p.Client] {
			inflated[p.Client] = true
			learnt++
		}
	}
	if learnt == 0 {
		t.Error("no dif inflated: nothing told the states' size")
	}
}
