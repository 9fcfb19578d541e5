package drive

import (
	"fmt"
	"slices"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// framePeriod is the length of a game frame.
const framePeriod = time.Second / decode.FrameRate

// TightMargin is the margin under which a packet counts as nearly late: a
// busy machine (another process, the network stack) delays a packet by
// that much often enough for the server to read it a frame later.
const TightMargin = 5 * time.Millisecond

// DefaultLead is how many frames before its frame drive sends an input the
// server will hold until then (see Options.Lead).
const DefaultLead = 4

// Margin is how early drive's packets left before the frame they had to be
// read in could begin. The server begins frame n+1 one frame period after
// it began frame n, and says it finished frame n (snfo) a little after it
// began it: the deadline of a packet to be read in frame n+1 is taken as
// the snfo of frame n's arrival plus a frame period, which is the latest
// the frame can begin, so a margin is at most the true one by the server's
// own time for a frame (well under a millisecond for the headless server).
type Margin struct {
	Packets int     `json:"packets"` // packets sent with a deadline (joins, inputs, file requests)
	MinMS   float64 `json:"min_ms"`
	P1MS    float64 `json:"p1_ms"` // the 1st percentile
	P50MS   float64 `json:"p50_ms"`
	Tight   int     `json:"tight"` // packets with less than TightMargin, or late
	// Hurried counts the frames the server began less than half a frame
	// after the one before (it was catching up with its clock): a packet
	// sent for such a frame had little time, whatever drive's margin.
	Hurried int `json:"hurried"`
	// Realtime says whether drive's clock and sending threads ran with
	// real-time scheduling (SCHED_FIFO, as root).
	Realtime bool `json:"realtime"`
}

func (m *Margin) String() string {
	if m == nil || m.Packets == 0 {
		return "no packet with a deadline"
	}
	rt := ""
	if m.Realtime {
		rt = ", real-time scheduling"
	}
	hurried := ""
	if m.Hurried > 0 {
		hurried = fmt.Sprintf("; the server ran %d frames hurried (less than half a frame after the one before)", m.Hurried)
	}
	return fmt.Sprintf("margin before each packet's frame: least %.1f ms, 1st percentile %.1f ms, median %.1f ms; %d of %d packets under %v%s%s",
		m.MinMS, m.P1MS, m.P50MS, m.Tight, m.Packets, TightMargin, rt, hurried)
}

// margins records the margin of every packet sent with a deadline, in
// microseconds, in a slice sized for the whole schedule so that the
// sending path does not allocate.
type margins struct {
	of   []int32 // by action index; noMargin until sent
	list []int32
}

const noMargin = -1 << 31

// maxHurried bounds the hurried frames a run keeps.
const maxHurried = 1 << 14

func newMargins(n int) margins {
	m := margins{of: make([]int32, n), list: make([]int32, 0, n)}
	for i := range m.of {
		m.of[i] = noMargin
	}
	return m
}

// add records action i sent at now, to be read in frame at, when the snfo
// of frame cur arrived at clockAt.
func (m *margins) add(i int, at, cur Key, clockAt, now time.Time) {
	frames := int32(1)
	if at.SLSN == cur.SLSN && at.Frame > cur.Frame {
		frames = at.Frame - cur.Frame
	}
	d := clockAt.Add(time.Duration(frames) * framePeriod).Sub(now)
	us := int32(max(min(d.Microseconds(), 1<<30), -(1 << 30)))
	m.of[i] = us
	m.list = append(m.list, us)
}

// margin returns the margin action i was sent with.
func (m *margins) margin(i int) (time.Duration, bool) {
	if i < 0 || i >= len(m.of) || m.of[i] == noMargin {
		return 0, false
	}
	return time.Duration(m.of[i]) * time.Microsecond, true
}

// summary sums the margins up.
func (m *margins) summary(realtime bool) *Margin {
	s := &Margin{Packets: len(m.list), Realtime: realtime}
	if len(m.list) == 0 {
		return s
	}
	l := slices.Clone(m.list)
	slices.Sort(l)
	ms := func(us int32) float64 { return float64(us) / 1000 }
	s.MinMS, s.P1MS, s.P50MS = ms(l[0]), ms(l[len(l)/100]), ms(l[len(l)/2])
	tight := int32(TightMargin / time.Microsecond)
	for _, us := range l {
		if us >= tight {
			break
		}
		s.Tight++
	}
	return s
}

// cause says whether lateness explains the run's divergence: the input
// the first divergence names left late or with a tight margin, or packets
// were late at all. It is empty when the run was reproduced or lateness
// does not explain it.
func (r *runner) cause() string {
	if r.first == nil && r.counts.Missing == 0 {
		return ""
	}
	if dv := r.first; dv != nil && dv.Input != nil {
		i := slices.Index(r.rec.Actions, dv.Input)
		if d, ok := r.margins.margin(i); ok && d < TightMargin {
			if d < 0 {
				return fmt.Sprintf("lateness: the %s the first divergence names left %.1f ms after its frame could begin", dv.Input.Kind, -float64(d)/1e6)
			}
			return fmt.Sprintf("lateness: the %s the first divergence names left only %.1f ms before its frame could begin", dv.Input.Kind, float64(d)/1e6)
		}
	}
	if dv := r.first; dv != nil && dv.Input != nil {
		// The frame it had to be read in, or one just before the state
		// that differs, began in a hurry.
		for _, k := range []Key{dv.Input.At, dv.At.Add(-1), dv.At} {
			if gap, ok := r.hurried[k]; ok {
				return fmt.Sprintf("lateness: the server began frame %d only %.1f ms after the one before (catching up with its clock on a busy machine), so a packet for it had no time to arrive", k.Frame, float64(gap)/1e6)
			}
		}
	}
	if r.counts.LateActions > 0 {
		return fmt.Sprintf("lateness: %d packets were sent after their frame had begun (the machine or the server was slow)", r.counts.LateActions)
	}
	return ""
}
