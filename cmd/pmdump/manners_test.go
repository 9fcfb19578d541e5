package main

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// A --schema for states of another size is refused, not applied.
func TestSchemaOfAnotherSize(t *testing.T) {
	t.Parallel()
	legacySchema := filepath.Join("..", "..", "schema", "builtin", "legacy-106144.json")
	_, errs, code := pmdump("stats", "--health", "--schema", legacySchema, "sample:modern")
	if code != 1 || !strings.Contains(errs, "describes 106144-byte states") {
		t.Errorf("stats --health: exit %d %q", code, errs)
	}
	_, errs, code = pmdump("state", "sample:modern", "--player", "1", "--frame", "100", "--slsn", "0", "--schema", legacySchema)
	if code != 1 || !strings.Contains(errs, "describes 106144-byte states") {
		t.Errorf("state: exit %d %q", code, errs)
	}
}

// diff --all-players --json names the two clients on every line; with
// --sent there is no hint to use --sent.
func TestDiffAllPlayersJSON(t *testing.T) {
	t.Parallel()
	lossy := realcap.Path(t, "legacy/lossy/capture.pcap")
	out, errs, code := pmdump("diff", lossy, "--all-players", "1825", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	lines := 0
	for sc.Scan() {
		var c struct{ A, B struct{ Client string } }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.A.Client != "127.0.0.1:24786" || c.B.Client != "127.0.0.1:24787" {
			t.Fatalf("line %d names %q and %q", lines, c.A.Client, c.B.Client)
		}
		lines++
	}
	if lines == 0 || !strings.Contains(errs, "--sent compares") {
		t.Errorf("%d lines; stderr %q", lines, errs)
	}
	_, errs, code = pmdump("diff", lossy, "--all-players", "1825", "--sent")
	if code != 0 || strings.Contains(errs, "--sent compares") {
		t.Errorf("with --sent: exit %d, stderr %q", code, errs)
	}
}

// --verify takes the server's ground truth too: every dif the server sent
// that the capture holds matches; the ones the network lost are missing,
// which is no failure.
func TestVerifyServerTruth(t *testing.T) {
	t.Parallel()
	summary := regexp.MustCompile(`(\d+) rows: (\d+) matched, 0 mismatched, (\d+) missing`)
	for _, tt := range []struct {
		capture, truth string
		lost           bool
	}{
		{"modern/basic/basic.pcap", "modern/basic/server_gt.csv", false},
		{"legacy/lossy/capture.pcap", "legacy/lossy/server/server_stdf_gt.csv", true},
	} {
		out, errs, code := pmdump("states", realcap.Path(t, tt.capture), "--verify", realcap.Path(t, tt.truth))
		m := summary.FindStringSubmatch(out)
		if code != 0 || m == nil {
			t.Errorf("%s: exit %d %s\n%s", tt.truth, code, errs, out)
			continue
		}
		if missing := m[3] != "0"; missing != tt.lost || m[2] == "0" {
			t.Errorf("%s: %s", tt.truth, m[0])
		}
	}
	// --frames keeps only the rows in its range.
	out, _, code := pmdump("states", realcap.Path(t, "modern/basic/basic.pcap"), "--verify", realcap.Path(t, "modern/basic/c1_client_gt.csv"), "--frames", "100-200")
	if m := summary.FindStringSubmatch(out); code != 0 || m == nil || m[1] != m[2] || m[1] == "0" || m[1] == "1275" {
		t.Errorf("--frames 100-200: exit %d %s", code, out)
	}
}
