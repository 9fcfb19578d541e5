package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/internal/golden"
)

// goldenDir holds one file per golden case: the command line, its exit
// status, its stderr and its stdout (whole, or the first lines and a sha256
// of the whole). The -update flag (package golden) rewrites them:
//
//	go test ./cmd/pmdump -run TestGolden -update
const goldenDir = "testdata/golden"

// goldenCase is one pmdump invocation whose output is pinned.
type goldenCase struct {
	name string   // golden file name, without .golden
	args []string // the command line after "pmdump"
	head int      // 0: keep the whole stdout; N: keep its first N lines and its sha256
}

// goldenLineCap is the longest stored line of a cut output (state --json
// is one line of about 90 KB); the sha256 still covers the whole line.
const goldenLineCap = 2000

// goldenBigHead is how many lines of a big output a golden file shows.
const goldenBigHead = 300

// realCap is a real capture of ../shared/captures with a short name for the
// golden files.
type realCap struct{ short, path string }

func goldenRealCaptures() []realCap {
	p := func(rel string) string { return filepath.Join(sharedCaptures, rel) }
	return []realCap{
		{"legacy-basic-pcap", p("legacy/basic/capture.pcap")},
		{"legacy-basic-pcapng", p("legacy/basic/capture.pcapng")},
		{"legacy-lossy", p("legacy/lossy/capture.pcap")},
		{"modern-basic", p("modern/basic/basic.pcap")},
		{"modern-basic-pcapng", p("modern/basic_pcapng/basic.pcapng")},
		{"modern-multi", p("modern/multi/multi.pcap")},
		{"aug-2024-basic", p("aug-2024/basic/capture.pcap")},
		{"aug-2024-multi", p("aug-2024/multi/capture.pcap")},
		{"jan-2026-basic", p("jan-2026/basic/capture.pcap")},
		{"head-2026-08-basic", p("head-2026-08/basic/capture.pcap")},
		{"head-2026-08-multi", p("head-2026-08/multi/capture.pcap")},
		{"head-2026-08-lossy-joinfail", p("head-2026-08/lossy_joinfail/capture.pcap")},
	}
}

// sampleGoldenCases run on the bundled samples: always available.
func sampleGoldenCases() []goldenCase {
	var cs []goldenCase
	for _, s := range captures.Names {
		in := "sample:" + s
		n := func(cmd, variant string) string { return cmd + "/sample-" + s + variant }
		cs = append(cs,
			goldenCase{name: n("read", ""), args: []string{"read", in}},
			goldenCase{name: n("read", "-V-c8"), args: []string{"read", "-V", "-c", "8", in}},
			goldenCase{name: n("read", "-V-Y-stdf-c3"), args: []string{"read", "-V", "-Y", "stdf", "-c", "3", in}},
			goldenCase{name: n("read", "-x-c4"), args: []string{"read", "-x", "-c", "4", in}},
			goldenCase{name: n("read", "-json-c20"), args: []string{"read", "--json", "-c", "20", in}},
			goldenCase{name: n("read", "-tr-c20"), args: []string{"read", "-t", "r", "-c", "20", in}},
			goldenCase{name: n("read", "-td-c20"), args: []string{"read", "-t", "d", "-c", "20", in}},
			goldenCase{name: n("read", "-te-c20"), args: []string{"read", "-t", "e", "-c", "20", in}},
			goldenCase{name: n("read", "-tad-c20"), args: []string{"read", "-t", "ad", "-c", "20", in}},
			goldenCase{name: n("stats", ""), args: []string{"stats", in}},
			goldenCase{name: n("stats", "-json"), args: []string{"stats", "--json", in}},
			goldenCase{name: n("stats", "-health"), args: []string{"stats", "--health", in}},
			goldenCase{name: n("stats", "-health-json"), args: []string{"stats", "--health", "--json", in}},
			goldenCase{name: n("states", ""), args: []string{"states", in}},
			goldenCase{name: n("states", "-json"), args: []string{"states", "--json", in}},
		)
	}
	// Errors: exit status and diagnostic.
	cs = append(cs,
		goldenCase{name: "errors/read-missing-file", args: []string{"read", filepath.Join(goldenDir, "no-such-capture.pcap")}},
		goldenCase{name: "errors/read-bad-filter", args: []string{"read", "-Y", "stdf and (", "sample:modern"}},
		goldenCase{name: "errors/read-bad-time-format", args: []string{"read", "-t", "x", "sample:modern"}},
		goldenCase{name: "errors/stats-unknown-flag", args: []string{"stats", "--bogus", "sample:modern"}},
		goldenCase{name: "errors/state-no-frame", args: []string{"state", "sample:modern"}},
		goldenCase{name: "errors/diff-one-arg", args: []string{"diff", "sample:modern"}},
	)
	return cs
}

// realGoldenCases run on ../shared/captures. The frames of state and diff are
// frames the clients applied according to the ground truth
// (c1_client_gt.csv, cN/client_gt.csv).
func realGoldenCases() []goldenCase {
	var cs []goldenCase
	for _, rc := range goldenRealCaptures() {
		n := func(cmd, variant string) string { return cmd + "/" + rc.short + variant }
		readHead := goldenBigHead
		if strings.HasPrefix(rc.short, "legacy-basic") {
			readHead = 0 // the two smallest captures: whole output
		}
		cs = append(cs,
			goldenCase{name: n("read", ""), args: []string{"read", rc.path}, head: readHead},
			goldenCase{name: n("read", "-json-c50"), args: []string{"read", "--json", "-c", "50", rc.path}},
			goldenCase{name: n("stats", ""), args: []string{"stats", rc.path}},
			goldenCase{name: n("stats", "-json"), args: []string{"stats", "--json", rc.path}},
			goldenCase{name: n("stats", "-health"), args: []string{"stats", "--health", rc.path}},
			goldenCase{name: n("states", "-json"), args: []string{"states", "--json", rc.path}, head: goldenBigHead},
		)
		if rc.short == "legacy-lossy" {
			// The text form once on a real capture (the samples have it too):
			// every states run rebuilds the whole capture.
			cs = append(cs, goldenCase{name: n("states", ""), args: []string{"states", rc.path}, head: goldenBigHead})
		}
	}
	caps := map[string]string{}
	for _, rc := range goldenRealCaptures() {
		caps[rc.short] = rc.path
	}
	lb, lbng, lossy := caps["legacy-basic-pcap"], caps["legacy-basic-pcapng"], caps["legacy-lossy"]
	mbng, multi, mb := caps["modern-basic-pcapng"], caps["modern-multi"], caps["modern-basic"]
	hb, amulti := caps["head-2026-08-basic"], caps["aug-2024-multi"]
	c1 := "127.0.0.1:24786" // c1 of modern/basic, player 1
	cs = append(cs,
		// read: verbose, filters and time formats (pcap µs and pcapng ns timestamps).
		goldenCase{name: "read/legacy-lossy-V-Y-stdf-c3", args: []string{"read", "-V", "-Y", "stdf", "-c", "3", lossy}},
		goldenCase{name: "read/modern-multi-V-Y-stdf-src0-c3", args: []string{"read", "-V", "-Y", "stdf and src == 0", "-c", "3", multi}},
		goldenCase{name: "read/modern-multi-V-c12", args: []string{"read", "-V", "-c", "12", multi}},
		goldenCase{name: "read/legacy-basic-pcap-tr-c40", args: []string{"read", "-t", "r", "-c", "40", lb}},
		goldenCase{name: "read/legacy-basic-pcapng-td-c40", args: []string{"read", "-t", "d", "-c", "40", lbng}},
		goldenCase{name: "read/modern-basic-pcapng-tr-c40", args: []string{"read", "-t", "r", "-c", "40", mbng}},
		goldenCase{name: "read/modern-basic-pcapng-td-c40", args: []string{"read", "-t", "d", "-c", "40", mbng}},
		goldenCase{name: "read/modern-basic-pcapng-te-c40", args: []string{"read", "-t", "e", "-c", "40", mbng}},
		goldenCase{name: "read/modern-basic-pcapng-tad-c40", args: []string{"read", "-t", "ad", "-c", "40", mbng}},
		goldenCase{name: "read/modern-multi-tad-Y-sjon", args: []string{"read", "-t", "ad", "-Y", "sjon", multi}},

		// states --explain on a few frames.
		goldenCase{name: "states/legacy-lossy-explain-p1-1700-1730", args: []string{"states", "--explain", "--player", "1", "--frames", "1700-1730", lossy}},

		// state and diff at frames the clients applied according to the ground
		// truth: legacy/lossy c1 (player 1) 1705 and 1825, c2 (player 2) 1820
		// (1825 picks it); modern/basic c1 (player 1) 408 and 422 of slsn 1;
		// modern/multi c1 and c2 729 of slsn 1. Every variant runs on
		// legacy/lossy and on modern/basic; modern/multi, the slowest to index,
		// only compares its three clients.
		goldenCase{name: "state/legacy-lossy-p1-1705", args: []string{"state", lossy, "--player", "1", "--frame", "1705"}},
		goldenCase{name: "state/legacy-lossy-p2-1825-region-players", args: []string{"state", lossy, "--player", "2", "--frame", "1825", "--region", "players"}},
		goldenCase{name: "state/legacy-lossy-p1-1705-json", args: []string{"state", lossy, "--player", "1", "--frame", "1705", "--json"}, head: goldenBigHead},
		goldenCase{name: "state/legacy-lossy-p1-5-before-first", args: []string{"state", lossy, "--player", "1", "--frame", "5"}},
		goldenCase{name: "state/modern-basic-p1-408", args: []string{"state", mb, "--player", "1", "--frame", "408", "--slsn", "1"}},
		goldenCase{name: "state/modern-basic-p1-422-json", args: []string{"state", mb, "--player", "1", "--frame", "422", "--slsn", "1", "--json"}, head: goldenBigHead},
		goldenCase{name: "state/modern-basic-c1-408-region-psyn", args: []string{"state", mb, "--client", c1, "--frame", "408", "--slsn", "1", "--region", "psyn"}},

		goldenCase{name: "diff/legacy-lossy-p1-1705-1825", args: []string{"diff", lossy, "--player", "1", "1705", "1825"}},
		goldenCase{name: "diff/legacy-lossy-p1-1705-1825-json", args: []string{"diff", lossy, "--player", "1", "1705", "1825", "--json"}},
		goldenCase{name: "diff/legacy-lossy-all-players-1825", args: []string{"diff", lossy, "--all-players", "1825"}},
		goldenCase{name: "diff/modern-basic-p1-408-422", args: []string{"diff", mb, "--player", "1", "408", "422", "--slsn", "1"}},
		goldenCase{name: "diff/modern-basic-p1-408-422-json", args: []string{"diff", mb, "--player", "1", "408", "422", "--slsn", "1", "--json"}},
		goldenCase{name: "diff/modern-multi-all-players-729", args: []string{"diff", multi, "--all-players", "729", "--slsn", "1"}},

		// The newer versions: head-2026-08/basic c1 (player 1) applied 701
		// (a keyframe) and 1227 of slsn 1; aug-2024/multi c1 and c2 both
		// applied 1732 of slsn 1.
		goldenCase{name: "read/head-2026-08-basic-V-c12", args: []string{"read", "-V", "-c", "12", hb}},
		goldenCase{name: "read/head-2026-08-basic-x-c4", args: []string{"read", "-x", "-c", "4", hb}},
		goldenCase{name: "state/head-2026-08-basic-p1-1227", args: []string{"state", hb, "--player", "1", "--frame", "1227", "--slsn", "1"}},
		goldenCase{name: "state/head-2026-08-basic-p1-1227-map", args: []string{"state", hb, "--player", "1", "--frame", "1227", "--slsn", "1", "--map"}},
		goldenCase{name: "state/head-2026-08-basic-p1-701-json", args: []string{"state", hb, "--player", "1", "--frame", "701", "--slsn", "1", "--json"}, head: goldenBigHead},
		goldenCase{name: "diff/head-2026-08-basic-p1-701-1227", args: []string{"diff", hb, "--player", "1", "701", "1227", "--slsn", "1"}},
		goldenCase{name: "diff/aug-2024-multi-all-players-1732", args: []string{"diff", amulti, "--all-players", "1732", "--slsn", "1"}},
	)
	return cs
}

// TestGolden runs the commands read, stats, states, state and diff on the
// bundled samples and the real captures and compares exit status, stderr and
// stdout with testdata/golden. A change of output shows as a line diff; when
// it is intended, rewrite the files with -update and review them with git diff.
func TestGolden(t *testing.T) {
	cases := sampleGoldenCases()
	if _, err := os.Stat(sharedCaptures); err != nil {
		t.Logf("real captures not available (%v): only the sample cases run", err)
	} else {
		for _, rc := range goldenRealCaptures() {
			if _, err := os.Stat(rc.path); err != nil {
				t.Fatalf("real capture missing: %v", err)
			}
		}
		cases = append(cases, realGoldenCases()...)
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.name] {
			t.Fatalf("two golden cases named %s", c.name)
		}
		seen[c.name] = true
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := pmdump(c.args...)
			got := renderGolden(c, stdout, stderr, code)
			path := filepath.Join(goldenDir, c.name+".golden")
			want := golden.Want(t, path, got, "go test ./cmd/pmdump -run TestGolden -update")
			if d := lineDiff(want, got); d != "" {
				t.Errorf("pmdump %s: output differs from %s:\n%s", strings.Join(c.args, " "), path, d)
			}
		})
	}
}

// renderGolden is the golden file text of one run: the command line, the exit
// status, stderr, and stdout with its size and sha256 (whole, or its first
// c.head lines, each cut at goldenLineCap bytes).
func renderGolden(c goldenCase, stdout, stderr string, code int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ pmdump %s\n", shellQuote(c.args))
	fmt.Fprintf(&b, "exit status %d\n", code)
	fmt.Fprintf(&b, "--- stderr: %d lines\n", countLines(stderr))
	b.WriteString(withNewline(stderr))
	n := countLines(stdout)
	sum := sha256.Sum256([]byte(stdout))
	if c.head == 0 || n <= c.head && !hasLongLine(stdout) {
		fmt.Fprintf(&b, "--- stdout: %d lines, %d bytes, sha256 %x, whole\n", n, len(stdout), sum)
		b.WriteString(withNewline(stdout))
		return b.String()
	}
	fmt.Fprintf(&b, "--- stdout: %d lines, %d bytes, sha256 %x, first %d lines (lines cut at %d bytes)\n",
		n, len(stdout), sum, min(c.head, n), goldenLineCap)
	lines := strings.SplitAfter(stdout, "\n")
	for _, l := range lines[:min(c.head, len(lines))] {
		if len(l) > goldenLineCap {
			l = fmt.Sprintf("%s …(%d bytes cut)\n", l[:goldenLineCap], len(l)-goldenLineCap)
		}
		b.WriteString(l)
	}
	return b.String()
}

// hasLongLine says whether a line of s is longer than goldenLineCap.
func hasLongLine(s string) bool {
	for l := range strings.SplitSeq(s, "\n") {
		if len(l) > goldenLineCap {
			return true
		}
	}
	return false
}

func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// withNewline ends a non-empty text without a final newline with a marked one.
func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n--- (no newline at end)\n"
}

var shellSafe = regexp.MustCompile(`^[-A-Za-z0-9_./:=@,+]+$`)

func shellQuote(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		if shellSafe.MatchString(a) {
			q[i] = a
		} else {
			q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(q, " ")
}

// lineDiff describes where two texts differ: the line counts and the
// differing lines (between the common first and last lines, at most 10 of
// each side) with a few lines of context; "" when they are equal.
func lineDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	we, ge := len(w), len(g)
	for we > i && ge > i && w[we-1] == g[ge-1] {
		we, ge = we-1, ge-1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "golden has %d lines, got %d; lines %d-%d of the golden differ\n", len(w), len(g), i+1, we)
	for j := max(0, i-3); j < i; j++ {
		fmt.Fprintf(&b, "  %s\n", g[j])
	}
	for j := i; j < we && j < i+10; j++ {
		fmt.Fprintf(&b, "- %s\n", w[j])
	}
	for j := i; j < ge && j < i+10; j++ {
		fmt.Fprintf(&b, "+ %s\n", g[j])
	}
	for j := ge; j < len(g) && j < ge+3; j++ {
		fmt.Fprintf(&b, "  %s\n", g[j])
	}
	return b.String()
}
