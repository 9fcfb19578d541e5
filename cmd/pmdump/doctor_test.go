package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/realcap"
)

// doctor on legacy/lossy: the JSON form has every key, times in both
// forms, sorted by severity; the text form says the same; exit 0 although
// it finds warnings; usage and input errors keep their statuses.
func TestDoctor(t *testing.T) {
	path := realcap.Path(t, "legacy/lossy/capture.pcap")
	out, errs, code := pmdump("doctor", "--fast", "--json", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	rank := map[string]int{"error": 2, "warning": 1, "info": 0}
	last := 3
	kinds := map[string]int{}
	bySev := map[string]int{}
	for _, l := range lines {
		var f map[string]any
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		for _, k := range []string{"kind", "severity", "start", "end", "start_s", "end_s", "conv", "player", "summary", "figures", "frames"} {
			if _, ok := f[k]; !ok {
				t.Errorf("%q lacks %q", l, k)
			}
		}
		sev := f["severity"].(string)
		if rank[sev] > last {
			t.Errorf("%s after a less severe finding", l)
		}
		last = rank[sev]
		bySev[sev]++
		kinds[f["kind"].(string)+" "+sev]++
		start, err := time.Parse(time.RFC3339Nano, f["start"].(string))
		if err != nil {
			t.Errorf("start %v: %v", f["start"], err)
		}
		// 23:50:29.861474 is the capture's first packet (MANIFEST).
		first := time.Date(2026, 11, 21, 23, 50, 29, 861474000, time.UTC)
		if d := start.Sub(first).Seconds() - f["start_s"].(float64); d > 1e-6 || d < -1e-6 {
			t.Errorf("start %v is %v s after the first packet, start_s %v", start, start.Sub(first).Seconds(), f["start_s"])
		}
	}
	// Loss: one per player and direction (both directions were impaired).
	for want, n := range map[string]int{"loss warning": 4, "late-inputs warning": 2, "join info": 2} {
		if kinds[want] != n {
			t.Errorf("%d × %s, want %d: %v", kinds[want], want, n, kinds)
		}
	}
	text, _, code := pmdump("doctor", "--fast", path)
	head := fmt.Sprintf("%d findings: %d errors, %d warnings, %d info", len(lines), bySev["error"], bySev["warning"], bySev["info"])
	if code != 0 || !strings.HasPrefix(text, head) || strings.Count(text, "\n") < 2*len(lines) {
		t.Errorf("exit %d, %d JSON lines, text:\n%s", code, len(lines), text)
	}
	checkExits(t, []exitCase{
		{[]string{"doctor"}, exitUsage},
		{[]string{"doctor", "--bogus", path}, exitUsage},
		{[]string{"doctor", filepath.Join(t.TempDir(), "none.pcap")}, exitUnreadable},
	})
}
