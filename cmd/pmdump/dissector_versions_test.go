package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
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
// shows once a conversation's first dif told the size of its states: that
// of package session's tracker told the same size at the same frame
// (session.Tracker.LearnStateSize, as the engine tells it), which ends with
// each conversation of the game's version, as pmdump stats says.
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

// compareStateSizeVersions runs tshark with the difs inflated: its
// packets' versions must be those of a tracker told the states' sizes
// (erasWithStateSizes), and the conversations end of version want, as
// pmdump stats finds them.
func compareStateSizeVersions(t *testing.T, tshark, lua, path string, want decode.Version) {
	t.Helper()
	got := tsharkPackets(t, tshark, "-n", "-X", "lua_script:"+lua, "-o", "pmnet.inflate:TRUE", "-r", path, "-Y", "pmnet",
		"-T", "json", "-e", "frame.number", "-e", "pmnet.era", "-e", "pmnet.dif.inflated")
	layers := make([]map[string][]string, len(got))
	for i := range got {
		layers[i] = got[i].Source.Layers
	}
	eras, convs := erasWithStateSizes(t, path, layers)
	if len(eras) != len(got) {
		t.Errorf("with the difs inflated, tshark shows %d pmnet packets, the tracker %d", len(got), len(eras))
	}
	learnt := 0
	for _, l := range layers {
		n, _ := strconv.Atoi(strings.Join(l["frame.number"], ""))
		if e := strings.Join(l["pmnet.era"], " "); e != eras[n] {
			t.Errorf("frame %d: dissector version %q, the tracker told the states' sizes %q", n, e, eras[n])
		}
		if l["pmnet.dif.inflated"] != nil {
			learnt++
		}
	}
	if learnt == 0 {
		t.Error("no dif inflated: nothing told the states' size")
	}
	for _, c := range convs {
		if c.Version != want {
			t.Errorf("the tracker told the states' sizes ends conversation %d of version %s, want %s", c.ID, c.Version, want)
		}
	}
	var js, stderr bytes.Buffer
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
	for _, c := range stats.Conversations {
		if c.Era != want.String() {
			t.Errorf("pmdump stats: conversation of %s is of version %s, want %s", c.Client, c.Era, want)
		}
	}
}

// erasWithStateSizes gives the version of every game packet of a capture
// (by frame number) as package session's tracker does when it is told the
// size of a conversation's states at the frame whose dif the dissector
// first inflated in it (got: the dissector's packets, with
// pmnet.dif.inflated), as the engine tells it from the first dif it
// inflates; and the tracker's conversations at the end. pmdump read
// inflates no dif, so where a state size tells versions apart (siblings
// whose packets are the same) its versions are those of a tracker told
// none.
func erasWithStateSizes(t *testing.T, path string, got []map[string][]string) (map[int]string, []*session.Conversation) {
	t.Helper()
	sizes := map[int]int{}
	for _, l := range got {
		if s := l["pmnet.dif.inflated"]; len(s) == 1 {
			n, _ := strconv.Atoi(strings.Join(l["frame.number"], ""))
			sizes[n], _ = strconv.Atoi(s[0])
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := source.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	tr := session.NewTracker(decode.VersionUnknown)
	eras := map[int]string{}
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		r := tr.Process(d)
		if r.Kind == session.NonGame {
			continue
		}
		eras[r.N] = r.Version.String()
		if n, ok := sizes[r.N]; ok && r.Conv != nil && r.Conv.StateSize == 0 {
			tr.LearnStateSize(r.Conv.ID, n)
		}
	}
	return eras, tr.Conversations()
}
