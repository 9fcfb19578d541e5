package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/reassemble"
)

// sharedCaptures is where the real captures of the game live, read-only,
// beside the repository (internal/realcap finds the same folder; the tests
// go through it to skip when ../shared is absent and fail when a file is
// missing).
const sharedCaptures = "../../../shared/captures"

// mustExist skips the test when the real captures are absent and fails it
// when path, a file among them, is missing.
func mustExist(t testing.TB, path string) {
	t.Helper()
	realcap.Dir(t)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("real capture file missing: %v", err)
	}
}

// realCapture is one real capture and the per-name packet counts its
// MANIFEST.md states.
type realCapture struct {
	path   string
	counts map[string]int
}

// manifestCounts parses the packet-count tables of the MANIFEST.md files:
// the legacy scenario files have "## Packet counts" with "| name | count |
// dir |" rows; the modern one has "#### Packet counts in `scenario/file`"
// with "| `name` | count | sizes |" rows.
func realCaptures(t *testing.T) []realCapture {
	t.Helper()
	realcap.Dir(t)
	row := regexp.MustCompile("^\\|\\s*`?([0-9A-Za-z]{4})`?\\s*\\|\\s*(\\d+)\\s*\\|")
	var out []realCapture
	// Legacy: one MANIFEST per scenario folder, counts for every capture in it.
	legacy, _ := filepath.Glob(filepath.Join(sharedCaptures, "legacy", "*", "MANIFEST.md"))
	for _, m := range legacy {
		counts := map[string]int{}
		in := false
		for _, line := range readLines(t, m) {
			if strings.HasPrefix(line, "#") {
				in = strings.HasPrefix(line, "## Packet counts")
				continue
			}
			if sm := row.FindStringSubmatch(line); in && sm != nil {
				counts[sm[1]], _ = strconv.Atoi(sm[2])
			}
		}
		caps := captureFiles(filepath.Dir(m))
		for _, c := range caps {
			out = append(out, realCapture{path: c, counts: counts})
		}
	}
	// Modern: one MANIFEST with a section per capture.
	m := filepath.Join(sharedCaptures, "modern", "MANIFEST.md")
	if _, err := os.Stat(m); err == nil {
		head := regexp.MustCompile("^#+ Packet counts in `([^`]+)`")
		var cur *realCapture
		for _, line := range readLines(t, m) {
			if strings.HasPrefix(line, "#") {
				cur = nil
				if hm := head.FindStringSubmatch(line); hm != nil {
					out = append(out, realCapture{path: filepath.Join(sharedCaptures, "modern", hm[1]), counts: map[string]int{}})
					cur = &out[len(out)-1]
				}
				continue
			}
			if sm := row.FindStringSubmatch(line); cur != nil && sm != nil {
				cur.counts[sm[1]], _ = strconv.Atoi(sm[2])
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("no captures with packet counts found under %s", sharedCaptures)
	}
	return out
}

// captureFiles lists the pcap and pcapng files in a folder.
func captureFiles(dir string) []string {
	a, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
	b, _ := filepath.Glob(filepath.Join(dir, "*.pcapng"))
	return append(a, b...)
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(b), "\n")
}

// pmdump runs the command in-process and returns stdout, stderr and status.
func pmdump(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func TestRealCapturesDecodeCompletely(t *testing.T) {
	t.Parallel()
	for _, rc := range realCaptures(t) {
		t.Run(strings.TrimPrefix(rc.path, sharedCaptures+"/"), func(t *testing.T) {
			if len(rc.counts) == 0 {
				t.Fatalf("MANIFEST gives no packet counts for %s", rc.path)
			}
			out, errs, code := pmdump("stats", "--json", rc.path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			var rep engine.Stats
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("stats --json: %v", err)
			}
			if rep.Malformed.Packets != 0 || rep.Unknown.Packets != 0 || rep.NonGame.Packets != 0 {
				t.Errorf("malformed %d, unknown %d, non-game %d; want all 0",
					rep.Malformed.Packets, rep.Unknown.Packets, rep.NonGame.Packets)
			}
			got := map[string]int{}
			for _, n := range rep.Packets {
				got[n.Type] += n.Packets
			}
			for name, want := range rc.counts {
				if got[name] != want {
					t.Errorf("%s: %d packets, MANIFEST says %d", name, got[name], want)
				}
			}
			for name, n := range got {
				if _, ok := rc.counts[name]; !ok {
					t.Errorf("%s: %d packets, MANIFEST lists no such name", name, n)
				}
			}
			if rep.Game.Packets != rep.UDP {
				t.Errorf("%d game packets of %d UDP datagrams", rep.Game.Packets, rep.UDP)
			}
			wantEra := "legacy"
			if strings.Contains(rc.path, "/modern/") {
				wantEra = "modern"
			}
			for _, c := range rep.Convs {
				if c.Era != wantEra {
					t.Errorf("conversation %s: era %s, want %s", c.Client, c.Era, wantEra)
				}
				if c.Player == nil || *c.Player < 1 || *c.Player > 7 {
					t.Errorf("conversation %s: no client player number", c.Client)
				}
				if c.Hostname != "vm" {
					t.Errorf("conversation %s: hostname %q, want \"vm\" (the captures' host)", c.Client, c.Hostname)
				}
			}
		})
	}
}

// The legacy MANIFESTs list how often each raw serr c_sync value occurs;
// the filter on the recovered (meant) value must find the same packets.
func TestLegacyNegativeRecoveryMatchesManifest(t *testing.T) {
	t.Parallel()
	path := filepath.Join(sharedCaptures, "legacy", "basic", "capture.pcap")
	mustExist(t, path)
	// "255: 411, 254: 98" in legacy/basic/MANIFEST.md.
	var raw map[int]int
	re := regexp.MustCompile(`(\d+): (\d+)`)
	for _, line := range readLines(t, filepath.Join(sharedCaptures, "legacy", "basic", "MANIFEST.md")) {
		if strings.HasPrefix(line, "Raw values of the serr") {
			raw = map[int]int{}
			_, rest, _ := strings.Cut(line, "):")
			for _, m := range re.FindAllStringSubmatch(rest, -1) {
				v, _ := strconv.Atoi(m[1])
				n, _ := strconv.Atoi(m[2])
				raw[v] = n
			}
		}
	}
	if len(raw) == 0 {
		t.Fatal("MANIFEST has no raw c_sync counts")
	}
	for v, n := range raw {
		meant := v - 256
		out, errs, code := pmdump("read", "-Y", "serr and c_sync == "+strconv.Itoa(meant), path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		lines := strings.Count(out, "\n")
		if lines != n {
			t.Errorf("c_sync == %d: %d packets, MANIFEST says raw %d occurs %d times", meant, lines, v, n)
		}
		if n > 0 && !strings.Contains(out, "c_sync="+strconv.Itoa(meant)+"(raw "+strconv.Itoa(v)+")") {
			t.Errorf("c_sync == %d: lines do not show the meant and raw value: %.200s", meant, out)
		}
	}
}

func TestJSONKeysOnRealCapture(t *testing.T) {
	for _, path := range []string{
		filepath.Join(sharedCaptures, "legacy", "basic", "capture.pcapng"),
		filepath.Join(sharedCaptures, "modern", "basic", "basic.pcap"),
	} {
		mustExist(t, path)
		out, errs, code := pmdump("read", "--json", "-c", "200", path)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		sc := bufio.NewScanner(strings.NewReader(out))
		n := 0
		for sc.Scan() {
			n++
			var obj map[string]any
			if err := json.Unmarshal(sc.Bytes(), &obj); err != nil {
				t.Fatalf("line %d is not JSON: %v: %s", n, err, sc.Text())
			}
			for _, k := range []string{"num", "ts", "src", "dst", "dir", "type", "era", "fields"} {
				if _, ok := obj[k]; !ok {
					t.Fatalf("line %d has no %q: %s", n, k, sc.Text())
				}
			}
			if _, ok := obj["error"]; ok {
				t.Errorf("line %d of a clean capture has an error: %s", n, sc.Text())
			}
			typ := obj["type"].(string)
			if typ == "stdf" {
				f := obj["fields"].(map[string]any)
				for _, k := range []string{"src", "dst", "seq", "count", "start", "size"} {
					if _, ok := f[k]; !ok {
						t.Errorf("stdf without field %s: %s", k, sc.Text())
					}
				}
				if _, ok := obj["player"]; !ok {
					t.Errorf("stdf without player: %s", sc.Text())
				}
			}
		}
		if n != 200 {
			t.Errorf("-c 200 printed %d lines", n)
		}
	}
}

// indexedEngines caches one engine with a state timeline per capture: many
// tests look states up in the same capture.
var indexedEngines sync.Map

// indexed returns the cached engine that indexed the states of path.
func indexed(t testing.TB, path string) *engine.Engine {
	type result struct {
		once sync.Once
		e    *engine.Engine
		err  error
	}
	v, _ := indexedEngines.LoadOrStore(path, &result{})
	r := v.(*result)
	r.once.Do(func() {
		r.e = engine.New(engine.Config{Work: engine.Timeline})
		r.err = r.e.Run(context.Background(), path)
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.e
}

// lineOf is the line of a client endpoint in an indexed capture.
func lineOf(t testing.TB, e *engine.Engine, client netip.AddrPort) reassemble.Chain {
	l, err := e.LineOf(engine.Selector{Client: client, Player: -1})
	if err != nil {
		t.Fatalf("%s: %v", client, err)
	}
	return l
}
