package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/futurecap"
	"github.com/pmdump/pmdump/internal/realcap"
)

// What each front end says of a capture of a future version (every stdf
// header 4 bytes longer, every stak a field longer): its conversations are
// of no known version, why, and that --era forces one; with --era 2026-07
// it says nothing of the kind and the packets are malformed instead.
func TestNoVersionFrontEnds(t *testing.T) {
	path := futurecap.Future(t)
	const reason = "stdf header fits no known version"
	said := engine.NoVersion(reason)
	row := func(conv, era string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^  ` + conv + `  +\S+  +\S+  +` + regexp.QuoteMeta(era) + `  `)
	}
	for _, tc := range []struct {
		name           string
		args           []string
		stdout, stderr []string         // each must be there
		not            []string         // in neither
		rows           []*regexp.Regexp // lines of stdout
		check          func(t *testing.T, stdout string)
	}{
		{name: "stats", args: []string{"stats", path},
			stdout: []string{"  conversation 1: " + said + "\n", "  conversation 2: " + said + "\n"},
			rows:   []*regexp.Regexp{row("1", "unknown"), row("2", "unknown")}},
		{name: "stats --json", args: []string{"stats", "--json", path}, check: func(t *testing.T, out string) {
			var st engine.Stats
			if err := json.Unmarshal([]byte(out), &st); err != nil {
				t.Fatal(err)
			}
			if len(st.Convs) != 2 {
				t.Fatalf("%d conversations", len(st.Convs))
			}
			for _, c := range st.Convs {
				if c.Era != "unknown" || c.Unrecognised != reason {
					t.Errorf("conversation %d: era %q, unrecognised %q", c.ID, c.Era, c.Unrecognised)
				}
			}
			if n := strings.Count(out, `"unrecognised": "`+reason+`"`); n != 2 {
				t.Errorf("%d unrecognised keys, want 2", n)
			}
		}},
		{name: "doctor", args: []string{"doctor", "--fast", path},
			stdout: []string{"0 errors, 2 warnings", "conv 1 p1 no-version: the conversation of player 1 (", "conv 2 p2 no-version: the conversation of player 2 (", ") is of no known version: " + reason + " ("}},
		{name: "doctor --json", args: []string{"doctor", "--json", path}, check: func(t *testing.T, out string) {
			convs := map[float64]bool{}
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				var f struct {
					Kind, Severity, Summary string
					Conv                    float64
					Frames                  struct{ First, Worst, Last int }
					Figures                 map[string]float64
				}
				if err := json.Unmarshal([]byte(l), &f); err != nil {
					t.Fatalf("%q: %v", l, err)
				}
				if f.Kind != engine.KindNoVersion {
					continue
				}
				convs[f.Conv] = true
				if f.Severity != "warning" || !strings.Contains(f.Summary, "is of no known version: "+reason) || !strings.HasSuffix(f.Summary, "; --era NAME forces one") ||
					f.Frames.First <= 0 || f.Frames.Last < f.Frames.First || f.Figures["packets"] == 0 {
					t.Errorf("finding %s", l)
				}
			}
			if !convs[1] || !convs[2] || len(convs) != 2 {
				t.Errorf("no-version findings of conversations %v, want 1 and 2", convs)
			}
		}},
		{name: "read", args: []string{"read", path},
			stdout: []string{"stdf [malformed: " + reason},
			stderr: []string{"pmdump: note: conversations 1 and 2 are " + said + "\n"}},
		{name: "read --json -c 200", args: []string{"read", "--json", "-c", "200", path},
			stderr: []string{"pmdump: note: conversations 1 and 2 are " + said + "\n"}},
		{name: "stats --era 2026-07", args: []string{"stats", "--era", "2026-07", path},
			rows: []*regexp.Regexp{row("1", "2026-07"), row("2", "2026-07")},
			not:  []string{"no known version"}},
		{name: "doctor --era 2026-07", args: []string{"doctor", "--fast", "--era", "2026-07", path},
			not: []string{"no-version", "no known version"}},
		{name: "read --era 2026-07", args: []string{"read", "--era", "2026-07", path},
			stdout: []string{"[malformed: stdf", "[malformed: stak"},
			not:    []string{"no known version", "note:"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errs, code := pmdump(tc.args...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, head(out))
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errs, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errs)
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(out, bad) || strings.Contains(errs, bad) {
					t.Errorf("%q in the output:\n%s\n%s", bad, head(out), errs)
				}
			}
			for _, re := range tc.rows {
				if !re.MatchString(out) {
					t.Errorf("no line %s:\n%s", re, head(out))
				}
			}
			if strings.Count(errs, "pmdump: note:") > 1 {
				t.Errorf("more than one note:\n%s", errs)
			}
			if tc.check != nil {
				tc.check(t, out)
			}
		})
	}
}

// head is the start of a long output, for a failure message.
func head(s string) string {
	if len(s) > 4000 {
		return s[:4000] + "…"
	}
	return s
}

// On the real captures, read, stats and doctor say nothing of a version
// they do not know.
func TestNoVersionRealCaptures(t *testing.T) {
	for _, rel := range []string{"head-2026-08/basic/capture.pcap", "aug-2024/multi/capture.pcap", "modern/multi/multi.pcap", "legacy/lossy/capture.pcap", "jan-2026/basic/capture.pcap"} {
		t.Run(rel, func(t *testing.T) {
			path := realcap.Path(t, rel)
			for _, args := range [][]string{{"read", path}, {"stats", "--json", path}, {"doctor", "--fast", path}} {
				out, errs, code := pmdump(args...)
				if code != exitOK {
					t.Fatalf("%v: exit %d: %s", args, code, errs)
				}
				for _, bad := range []string{"no known version", "no-version", `"unrecognised"`} {
					if strings.Contains(out, bad) || strings.Contains(errs, bad) {
						t.Errorf("%v: %q in the output", args[0], bad)
					}
				}
			}
		})
	}
}
