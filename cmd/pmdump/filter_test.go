package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// The frame number has one name, num, in read --json and in filters; a
// filter on a field only some packets have says which when it matches
// nothing.
func TestFrameNumberOneName(t *testing.T) {
	t.Parallel()
	path := realcap.Path(t, "legacy/basic/capture.pcap")
	out, errs, code := pmdump("read", "--json", "-Y", "num in 7300..7302", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var nums []int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var p struct {
			Num *int `json:"num"`
		}
		if err := json.Unmarshal([]byte(line), &p); err != nil || p.Num == nil {
			t.Fatalf("no num in %s (%v)", line, err)
		}
		nums = append(nums, *p.Num)
	}
	if len(nums) != 3 || nums[0] != 7300 || nums[2] != 7302 {
		t.Errorf("num in 7300..7302 gives the packets numbered %v", nums)
	}
	for _, w := range []string{"", "-"} {
		args := []string{"read", "-Y", "n in 7300..7302", path}
		if w != "" {
			args = append(args, "-w", w)
		}
		_, errs, code = pmdump(args...)
		if want := `note: no packet matched "n in 7300..7302": n is a field of sdat only (the frame number in the capture is num)`; code != 0 || !strings.Contains(errs, want) {
			t.Errorf("%v: exit %d, stderr %q lacks %q", args, code, errs, want)
		}
	}
}
