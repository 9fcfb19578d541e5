package replay

import (
	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
)

// restartGap is how far back a keyframe's dst must be from the newest one
// for the frames of a version without the level sequence on the wire to
// count as restarted (decode.LevelRestartGap).
const restartGap = decode.LevelRestartGap

// MaxFrame is the largest game frame taken at its word: 2^24 frames are
// almost five days of play at 40 frames a second. A dif with a larger
// frame does not move the level-sequence inference (a hostile dst of 2^31
// must not make every later keyframe look like a level restart).
const MaxFrame = 1 << 24

// LevelInference infers the level sequence of one line's difs in a version
// whose pieces do not carry it (legacy): it is 0, then +1 whenever the client's frames
// restart with a keyframe. Only whole difs move it (an abandoned one ends
// seconds late), in the order the difs ended.
type LevelInference struct {
	slsn   int
	maxDst int32
	// Implausible counts complete difs whose frames are beyond MaxFrame.
	Implausible int
}

// Current is the level sequence of the newest dif.
func (x *LevelInference) Current() int { return x.slsn }

// Infer returns the level sequence of message m.
func (x *LevelInference) Infer(m *reassemble.Message) int {
	if m.Status == reassemble.Complete {
		if m.Dst > MaxFrame || m.Src > MaxFrame || m.Dst < 0 || m.Src < 0 {
			x.Implausible++
			return x.slsn
		}
		if m.Src == 0 && m.Dst+restartGap < x.maxDst {
			x.slsn++
			x.maxDst = 0
		}
		if m.Dst > x.maxDst {
			x.maxDst = m.Dst
		}
	}
	return x.slsn
}
