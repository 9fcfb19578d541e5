package engine_test

import (
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/replay"
)

// TestPastPick checks the stop rule of a pick: 10 s of play at the game's
// 40 frames a second is 400 frames past the frame picked.
func TestPastPick(t *testing.T) {
	tests := []struct {
		name       string
		slsn       int
		dst        int32
		pickSLSN   int
		pickFrame  int
		wantPassed bool
	}{
		{"earlier level", 0, 100000, 1, 10, false},
		{"same level, before the frame", 1, 5, 1, 10, false},
		{"same level, 10 s after the frame", 1, 410, 1, 10, false},
		{"same level, one frame beyond 10 s", 1, 411, 1, 10, true},
		{"later level, frame 0", 2, 0, 1, 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &replay.State{SLSN: tt.slsn}
			s.Dst = tt.dst
			if got := engine.PastPick(s, tt.pickSLSN, tt.pickFrame); got != tt.wantPassed {
				t.Errorf("PastPick(slsn %d dst %d, %d, %d) = %v, want %v", tt.slsn, tt.dst, tt.pickSLSN, tt.pickFrame, got, tt.wantPassed)
			}
		})
	}
}
