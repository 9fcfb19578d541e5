package main

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/replay"
)

// stateDump is a raw state a real client saved, and which one it is.
type stateDump struct {
	path   string
	client netip.AddrPort
	slsn   int
	frame  int32
}

// Every raw state the real clients dumped is rebuilt byte for byte from the
// timeline index (from checkpoints and difs, not from the first pass).
func TestRealStateDumps(t *testing.T) {
	t.Parallel()
	realcap.Dir(t)
	modern := regexp.MustCompile(`c(\d)_states/state_(\d+)_slsn(\d+)\.bin$`)
	legacy := regexp.MustCompile(`c(\d)/state_(\d+)\.bin$`)
	byCapture := map[string][]stateDump{}
	dumps, _ := filepath.Glob(filepath.Join(sharedCaptures, "modern", "*", "c*_states", "*.bin"))
	for _, d := range dumps {
		m := modern.FindStringSubmatch(d)
		n, _ := strconv.Atoi(m[1])
		fr, _ := strconv.Atoi(m[2])
		k, _ := strconv.Atoi(m[3])
		c := captureFiles(filepath.Dir(filepath.Dir(d)))[0]
		byCapture[c] = append(byCapture[c], stateDump{d, netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", 24785+n)), k, int32(fr)})
	}
	dumps, _ = filepath.Glob(filepath.Join(sharedCaptures, "legacy", "*", "c*", "state_*.bin"))
	for _, d := range dumps {
		m := legacy.FindStringSubmatch(d)
		n, _ := strconv.Atoi(m[1])
		fr, _ := strconv.Atoi(m[2])
		for _, c := range captureFiles(filepath.Dir(filepath.Dir(d))) {
			byCapture[c] = append(byCapture[c], stateDump{d, netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", 24785+n)), 0, int32(fr)})
		}
	}
	if len(byCapture) == 0 {
		t.Fatal("no state dumps found")
	}
	for c, ds := range byCapture {
		t.Run(c[len(sharedCaptures)+1:], func(t *testing.T) {
			e := indexed(t, c)
			for _, d := range ds {
				l := lineOf(t, e, d.client)
				i := e.Find(l, d.slsn, d.frame, false)
				if i < 0 || e.Entries(nil, l, i, i+1)[0].Frame.N != d.frame {
					t.Errorf("%s: state not in the timeline", d.path)
					continue
				}
				got, err := e.State(nil, l, i)
				if err != nil {
					t.Errorf("%s: %v", d.path, err)
					continue
				}
				want, _ := os.ReadFile(d.path)
				if !bytes.Equal(got, want) {
					t.Errorf("%s: rebuilt state differs from the client's dump", d.path)
				}
			}
			t.Logf("%d dumps", len(ds))
		})
	}
}

func TestStateCommand(t *testing.T) {
	t.Parallel()
	path := filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap")
	dump := filepath.Join(sharedCaptures, "modern", "multi", "c1_states", "state_1319_slsn1.bin")
	mustExist(t, dump)
	out := filepath.Join(t.TempDir(), "s.bin")
	// Frame 1320 has no state of its own for c1: the latest at or before it is 1319.
	_, errs, code := pmdump("state", path, "--player", "1", "--frame", "1320", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, _ := os.ReadFile(out)
	want, _ := os.ReadFile(dump)
	if !bytes.Equal(got, want) {
		t.Errorf("state at frame 1320 is not c1's state 1319 (stderr %q)", errs)
	}
	if !regexp.MustCompile(`frame 1320: the state of frame 1319`).MatchString(errs) {
		t.Errorf("stderr does not say which state: %q", errs)
	}
	// Frame 200 exists in level sequences 0 and 1.
	_, errs, code = pmdump("state", path, "--player", "1", "--frame", "200", "-o", out)
	if code != 1 || !regexp.MustCompile(`level sequences 0, 1`).MatchString(errs) {
		t.Errorf("ambiguous frame: exit %d, stderr %q", code, errs)
	}
}

// A client acknowledges every dif it applies: in the real captures without
// loss, the states the timeline marks acknowledged are exactly the rows of
// the client's ground truth.
func TestRealAcksAreAppliedStates(t *testing.T) {
	t.Parallel()
	gts, _ := filepath.Glob(filepath.Join(realcap.Dir(t), "modern", "*", "c*_client_gt.csv"))
	if len(gts) == 0 {
		t.Fatal("no modern client ground truth in the real captures")
	}
	for _, gt := range gts {
		c := captureFiles(filepath.Dir(gt))[0]
		e := indexed(t, c)
		n, _ := strconv.Atoi(filepath.Base(gt)[1:2])
		client := netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", 24785+n))
		want := map[replay.Frame]bool{}
		for _, r := range csvRows(t, gt) {
			dst, _ := strconv.Atoi(r[0])
			slsn, _ := strconv.Atoi(r[3])
			want[replay.Frame{SLSN: slsn, N: int32(dst)}] = true
		}
		got := map[replay.Frame]bool{}
		for _, en := range e.Entries(nil, lineOf(t, e, client), 0, -1) {
			if en.Acked() {
				got[en.Frame] = true
			}
		}
		for f := range want {
			if !got[f] {
				t.Errorf("%s: applied state %v not marked acknowledged", gt, f)
			}
		}
		for f := range got {
			if !want[f] {
				t.Errorf("%s: state %v marked acknowledged but never applied", gt, f)
			}
		}
	}
}
