package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/report"
	"github.com/pmdump/pmdump/schema"
)

// TestReportCommand runs pmdump report: the page goes to the file (or to
// standard output with -o -) and its data reads back; bad invocations and
// unreadable inputs get their exit statuses.
func TestReportCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "game.html")
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"file", []string{"report", "sample:modern", "-o", out}, exitOK},
		{"no -o", []string{"report", "sample:modern"}, exitUsage},
		{"no input", []string{"report", "-o", out}, exitUsage},
		{"bad era", []string{"report", "sample:modern", "--era", "future", "-o", out}, exitUsage},
		{"unreadable", []string{"report", filepath.Join(dir, "absent.pcap"), "-o", filepath.Join(dir, "x.html")}, exitUnreadable},
	}
	for _, c := range cases {
		_, errs, code := pmdump(c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (%s)", c.name, code, c.code, errs)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x.html")); err == nil {
		t.Error("a report was written for an unreadable input")
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	d, err := report.Read(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Conversations) != 2 || d.Summary.Eras["modern"] != 2 {
		t.Fatalf("sample:modern: %d conversations, eras %v; want 2 modern", len(d.Conversations), d.Summary.Eras)
	}
	stdout, errs, code := pmdump("report", "sample:modern", "-o", "-")
	if code != exitOK {
		t.Fatalf("-o -: exit %d: %s", code, errs)
	}
	d2, err := report.Read([]byte(stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(d2.Conversations) != len(d.Conversations) || len(d2.Conversations[0].Replay.T) != len(d.Conversations[0].Replay.T) {
		t.Fatal("-o - wrote other data than -o FILE")
	}
}

// TestReportPositionsMatchStateJSON compares the players' positions of
// the report of a real capture of each era with what pmdump state --json
// prints for the same client, level sequence and frame.
func TestReportPositionsMatchStateJSON(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"legacy/basic/capture.pcap", "modern/basic/basic.pcap"} {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			path := realcap.Path(t, rel)
			page, errs, code := pmdump("report", path, "-o", "-")
			if code != exitOK {
				t.Fatalf("report: exit %d: %s", code, errs)
			}
			d, err := report.Read([]byte(page))
			if err != nil {
				t.Fatal(err)
			}
			cv := d.Conversations[0]
			n := len(cv.Replay.T)
			if n == 0 {
				t.Fatal("empty replay")
			}
			for _, k := range []int{n / 3, n - 1} {
				slsn, frame := cv.Replay.SLSN[k], cv.Replay.Frame[k]
				out, errs, code := pmdump("state", path, "--conv", strconv.Itoa(cv.ID), "--slsn", strconv.Itoa(slsn), "--frame", strconv.Itoa(int(frame)), "--json")
				if code != exitOK {
					t.Fatalf("state: exit %d: %s", code, errs)
				}
				var st struct {
					Frame   int32                      `json:"frame"`
					Schema  string                     `json:"schema"`
					Regions map[string]json.RawMessage `json:"regions"`
				}
				if err := json.Unmarshal([]byte(out), &st); err != nil {
					t.Fatalf("state --json: %v", err)
				}
				var sch *schema.Schema
				for _, size := range []int{106144, 112384} { // the built-in schemas' sizes
					if s := schema.For(size); s != nil && s.Name == st.Schema {
						sch = s
					}
				}
				if sch == nil || st.Frame != frame {
					t.Fatalf("state --json: schema %q frame %d, want frame %d", st.Schema, st.Frame, frame)
				}
				pv := sch.View.Players
				var recs []map[string]any
				if err := json.Unmarshal(st.Regions[pv.Region], &recs); err != nil {
					t.Fatalf("state --json region %s: %v", pv.Region, err)
				}
				compared := 0
				for p, rec := range recs {
					if p >= report.MaxPlayers {
						break
					}
					tr, ok := cv.Replay.Players[strconv.Itoa(p)]
					active := rec[pv.Active].(float64) != 0
					if !active {
						if ok && !math.IsNaN(tr.X.V[k]) {
							t.Errorf("entry %d: player %d is not active, the report has x=%v", k, p, tr.X.V[k])
						}
						continue
					}
					if !ok || tr.X.V[k] != rec[pv.X].(float64) || tr.Y.V[k] != rec[pv.Y].(float64) {
						t.Errorf("slsn %d frame %d player %d: report %v, state --json x=%v y=%v", slsn, frame, p, tr, rec[pv.X], rec[pv.Y])
					}
					compared++
				}
				if compared == 0 {
					t.Errorf("slsn %d frame %d: no active player", slsn, frame)
				}
			}
		})
	}
}
