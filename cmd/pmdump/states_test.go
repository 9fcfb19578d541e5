package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// groundTruth is one client's ground-truth CSV in a real capture's folder.
type groundTruth struct {
	capture string
	csv     string
	args    []string // how to select the client: --player or --client
}

// realTruths finds every client ground-truth CSV of the real captures.
// Legacy: cN/client_gt.csv with the player in cN/client_join.txt. Modern:
// cN_client_gt.csv, client N on UDP port 24785+N (the README's rule). The
// newer builds: see newerTruths.
func realTruths(t *testing.T) []groundTruth {
	t.Helper()
	realcap.Dir(t)
	var out []groundTruth
	legacy, _ := filepath.Glob(filepath.Join(sharedCaptures, "legacy", "*", "c*", "client_gt.csv"))
	for _, gt := range legacy {
		join, err := os.ReadFile(filepath.Join(filepath.Dir(gt), "client_join.txt"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`player=(\d+)`).FindSubmatch(join)
		if m == nil {
			t.Fatalf("%s: no player", gt)
		}
		caps := captureFiles(filepath.Dir(filepath.Dir(gt)))
		for _, c := range caps {
			out = append(out, groundTruth{c, gt, []string{"--player", string(m[1])}})
		}
	}
	modern, _ := filepath.Glob(filepath.Join(sharedCaptures, "modern", "*", "c*_client_gt.csv"))
	for _, gt := range modern {
		n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(gt), "c"), "_client_gt.csv"))
		caps := captureFiles(filepath.Dir(gt))
		for _, c := range caps {
			out = append(out, groundTruth{c, gt, []string{"--client", fmt.Sprintf("127.0.0.1:%d", 24785+n)}})
		}
	}
	out = append(out, newerTruths(t)...)
	if len(out) == 0 {
		t.Fatal("no ground truth found")
	}
	return out
}

// newerTruths finds the client ground truth of the captures of the newer
// builds (every folder but legacy and modern): SCENARIO/cN_client_gt.csv,
// whose client's address the folder's MANIFEST.md gives, in the section of
// the scenario's capture, as "cN = ADDR player P: D difs applied". A client
// that applied no dif has nothing to verify.
func newerTruths(t *testing.T) []groundTruth {
	t.Helper()
	var out []groundTruth
	manifests, _ := filepath.Glob(filepath.Join(sharedCaptures, "*", "MANIFEST.md"))
	section := regexp.MustCompile("(?m)^#+ `([^`]+)`")
	client := regexp.MustCompile(`\bc(\d+) = (\d+\.\d+\.\d+\.\d+:\d+) player \d+: (\d+) difs applied`)
	for _, m := range manifests {
		dir := filepath.Dir(m)
		if base := filepath.Base(dir); base == "legacy" || base == "modern" {
			continue
		}
		text, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		heads := section.FindAllSubmatchIndex(text, -1)
		for i, h := range heads {
			end := len(text)
			if i+1 < len(heads) {
				end = heads[i+1][0]
			}
			capture := filepath.Join(dir, string(text[h[2]:h[3]]))
			for _, c := range client.FindAllSubmatch(text[h[1]:end], -1) {
				gt := filepath.Join(filepath.Dir(capture), "c"+string(c[1])+"_client_gt.csv")
				if string(c[3]) == "0" {
					continue // a client that applied nothing (a failed join)
				}
				if _, err := os.Stat(gt); err != nil {
					t.Fatalf("%s names client c%s of %s, without its ground truth: %v", m, c[1], capture, err)
				}
				out = append(out, groundTruth{capture, gt, []string{"--client", string(c[2])}})
			}
		}
	}
	if len(manifests) > 2 && len(out) == 0 {
		t.Fatal("no ground truth of the newer builds found in their MANIFEST.md files")
	}
	return out
}

func csvRows(t *testing.T, path string) [][]string {
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
	return rows[1:]
}

// Every state every client applied in the real games is rebuilt from the
// capture alone with the identical sha256.
func TestRealGroundTruthVerifies(t *testing.T) {
	t.Parallel()
	verifyLine := regexp.MustCompile(`(\d+) rows: (\d+) matched, (\d+) mismatched, (\d+) missing`)
	for _, gt := range realTruths(t) {
		name := strings.TrimPrefix(gt.capture, sharedCaptures+"/") + " " + filepath.Base(filepath.Dir(gt.csv)) + "/" + filepath.Base(gt.csv)
		t.Run(name, func(t *testing.T) {
			args := append([]string{"states", gt.capture, "--verify", gt.csv}, gt.args...)
			out, errs, code := pmdump(args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, errs, out)
			}
			m := verifyLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no verify summary in %q", out)
			}
			rows := len(csvRows(t, gt.csv))
			if m[1] != strconv.Itoa(rows) || m[2] != strconv.Itoa(rows) || m[3] != "0" || m[4] != "0" {
				t.Errorf("%s; want all %d rows matched", m[0], rows)
			}
		})
	}
}

// The server's own record of every dif it sent gives the sha256 of each dst
// state: every state rebuilt from the capture must agree with it, and every
// dif the server sent whose pieces all reached the capture is rebuilt.
func TestRealServerTruth(t *testing.T) {
	t.Parallel()
	realcap.Dir(t)
	caps := map[string]string{}
	for _, p := range []string{"legacy/*/server/server_stdf_gt.csv", "modern/*/server_gt.csv"} {
		gts, _ := filepath.Glob(filepath.Join(sharedCaptures, p))
		for _, gt := range gts {
			dir := filepath.Dir(gt)
			if filepath.Base(dir) == "server" {
				dir = filepath.Dir(dir)
			}
			c, _ := filepath.Glob(filepath.Join(dir, "*.pcap"))
			if len(c) == 0 {
				c, _ = filepath.Glob(filepath.Join(dir, "*.pcapng"))
			}
			if len(c) > 0 {
				caps[c[0]] = gt
			}
		}
	}
	if len(caps) == 0 {
		t.Fatal("no real captures with server ground truth")
	}
	for capture, gt := range caps {
		t.Run(strings.TrimPrefix(capture, sharedCaptures+"/"), func(t *testing.T) {
			// (player, slsn, dst) → sha256; legacy rows have no slsn column.
			want := map[string]string{}
			for _, r := range csvRows(t, gt) {
				slsn := "0"
				if len(r) >= 8 {
					slsn = r[6]
				}
				want[r[0]+"/"+slsn+"/"+r[2]] = r[5]
			}
			out, errs, code := pmdump("states", "--json", capture)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			ok, other := 0, map[string]int{}
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				var s struct {
					Player           int
					SLSN             int
					Dst              int
					Status           string
					SHA256           string
					Size, Compressed int
				}
				if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
					t.Fatal(err)
				}
				if s.Status != "ok" {
					other[s.Status]++
					continue
				}
				ok++
				k := fmt.Sprintf("%d/%d/%d", s.Player, s.SLSN, s.Dst)
				if w, found := want[k]; !found {
					t.Errorf("state %s rebuilt but the server never sent it", k)
				} else if w != s.SHA256 {
					t.Errorf("state %s: sha256 %s, server %s", k, s.SHA256, w)
				}
			}
			if other["missing-base"] != 0 || other["corrupt"] != 0 {
				t.Errorf("statuses other than ok: %v", other)
			}
			// Every sent dif is either rebuilt or was (partly) lost on the way.
			if ok+other["incomplete"] > len(want) {
				t.Errorf("%d ok + %d incomplete > %d difs the server sent", ok, other["incomplete"], len(want))
			}
			t.Logf("%d states ok, %v, server sent %d", ok, other, len(want))
		})
	}
}

// Two captures of the same client endpoint read as one: each new handshake
// starts a new session, with its own era, state size and frames.
func TestSessionsOfOneEndpoint(t *testing.T) {
	t.Parallel()
	legacy := filepath.Join(sharedCaptures, "legacy", "basic", "capture.pcap")
	modern := filepath.Join(sharedCaptures, "modern", "basic", "basic.pcap")
	mustExist(t, modern)
	out, errs, code := pmdump("stats", "--states", "--json", legacy, modern)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep engine.Stats
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Convs) != 2 || rep.Convs[0].Era != "legacy" || rep.Convs[1].Era != "modern" || rep.Convs[0].Client != rep.Convs[1].Client {
		t.Fatalf("conversations %+v, want a legacy then a modern session of one client", rep.Convs)
	}
	// Each conversation has its own dif figures.
	if len(rep.Difs) != 2 {
		t.Fatalf("dif figures of %d conversations, want 2", len(rep.Difs))
	}
	for i, want := range []int{472, 2169} {
		if d := rep.Difs[i]; d.Conv != i+1 || *d.OK != want || d.Corrupt+*d.MissingBase+d.Incomplete != 0 {
			t.Errorf("conversation %d: difs %+v, want all %d ok", i+1, d, want)
		}
	}
	gt := filepath.Join(sharedCaptures, "modern", "basic", "c1_client_gt.csv")
	res, errs, code := pmdump("states", legacy, modern, "--verify", gt, "--conv", "2")
	if code != 0 || !strings.Contains(res, "1275 matched, 0 mismatched, 0 missing") {
		t.Errorf("verify: exit %d %s\n%s", code, errs, res)
	}
	// Frames no row is about: the engine says so, the command names the flag.
	_, errs, code = pmdump("states", legacy, modern, "--verify", gt, "--conv", "2", "--frames", "999999-9999999")
	if code != 1 || !strings.Contains(errs, "pmdump: --verify: none of the 1275 rows of "+gt+" is about the states asked for") {
		t.Errorf("verify of no row: exit %d %s", code, errs)
	}
	// --player 1 is the client of both: refused, listing them.
	_, errs, code = pmdump("state", legacy, modern, "--player", "1", "--frame", "300")
	if code != 1 || !strings.Contains(errs, "matches 2 conversations: 1 (127.0.0.1:24786), 2 (127.0.0.1:24786)") {
		t.Errorf("ambiguous --player: exit %d %s", code, errs)
	}
}
