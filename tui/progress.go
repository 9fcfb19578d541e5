package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/reassemble"
)

// progressLine says, apart, how far the engine has read the capture (bytes
// read, packets indexed) and rebuilt its states (in all, and per client
// while there is room); a figure says complete only when it is.
func (c *env) progressLine(ev engine.ProgressEvent, w int) string {
	p := c.e.Progress()
	if c.done && c.live == "" {
		return fmt.Sprintf("%d packets", p.Packets) // all read, all rebuilt: nothing in progress
	}
	var parts []string
	switch {
	case c.live != "":
		s := fmt.Sprintf("live %s: %d packets", c.live, p.Packets)
		if p.KernelReceived > 0 || p.KernelDropped > 0 {
			s += fmt.Sprintf(", %d dropped by the kernel", p.KernelDropped)
		}
		if c.read {
			s += " (capture ended)"
		}
		parts = append(parts, s)
	case !c.read:
		parts = append(parts, progressBar(ev, 20), fmt.Sprintf("%d packets indexed", p.Packets))
	default:
		parts = append(parts, fmt.Sprintf("read: %d packets", p.Packets))
	}
	parts = append(parts, rebuildLine(p, c.read, c.wanted, max(w/2, 40)))
	return strings.Join(parts, "  ")
}

// rebuildLine is the rebuild's part of the progress line: states rebuilt
// of the difs found so far, and the clients not done yet while w has room,
// the one taken first (wanted) first.
func rebuildLine(p engine.Progress, read bool, wanted reassemble.Chain, w int) string {
	if p.Done {
		return fmt.Sprintf("states: %d rebuilt", p.Rebuilt)
	}
	s := fmt.Sprintf("states: %d of %d rebuilt", p.Rebuilt, p.Difs)
	if read {
		s += fmt.Sprintf(" (%d %%)", min(percent(p.Rebuilt, p.Difs), 99)) // 100 once Done
	} else {
		s += " so far"
	}
	lines := p.Lines
	if i := slices.IndexFunc(lines, func(l engine.LineProgress) bool { return l.Line == wanted }); i > 0 {
		lines = slices.Concat(lines[i:i+1], lines[:i], lines[i+1:])
	}
	for _, l := range lines {
		if l.Rebuilt >= l.Difs && read {
			continue
		}
		c := fmt.Sprintf(" · c%d %d %%", l.Line.Conv, percent(l.Rebuilt, l.Difs))
		if len(s)+len(c) > w {
			break
		}
		s += c
	}
	return s
}

// percent is done of all in whole percent, 100 only when done == all.
func percent(done, all int) int {
	if all <= 0 || done >= all {
		return 100
	}
	return min(done*100/all, 99)
}

// lineProgress is how far the rebuild of line l has come: "" when it is
// complete, else "rebuilding, 41 %" (of the difs found so far while the
// capture is still read).
func (c *env) lineProgress(l reassemble.Chain) string {
	if c.done {
		return ""
	}
	for _, lp := range c.e.Progress().Lines {
		if lp.Line != l {
			continue
		}
		if lp.Rebuilt >= lp.Difs && c.read {
			return ""
		}
		s := fmt.Sprintf("rebuilding, %d %%", percent(lp.Rebuilt, lp.Difs))
		if !c.read {
			s += " of the difs read so far"
		}
		return s
	}
	return ""
}

// wanted is what the state rebuild was last asked to take first.
type wanted struct {
	line reassemble.Chain
	upTo int
}

// wantFirst asks the engine to rebuild first the states under the cursor:
// in the timeline, state and diff views, every state of the client shown
// (a client reached with c may not be rebuilt as far as the frame asked
// for), in the packet list, the client of the packet under the cursor up
// to that packet.
func (m *Model) wantFirst() {
	c := &m.env
	if c.done {
		return
	}
	w := wanted{upTo: -1}
	switch c.view {
	case viewTimeline, viewState, viewDiff:
		if w.line = m.scrub.line(); w.line == (reassemble.Chain{}) {
			return
		}
	case viewPackets:
		x, p := m.e.Index(), &m.packets
		if x == nil || p.cur < 0 || p.cur >= p.n(c) {
			return
		}
		ie := x.Entry(p.pos(p.cur))
		if ie.Conv == 0 {
			return
		}
		w.upTo = int(ie.N)
		if m.wanted.line.Conv == int(ie.Conv) {
			w.line = m.wanted.line
			break
		}
		for _, lp := range m.e.Progress().Lines {
			if lp.Line.Conv == int(ie.Conv) {
				w.line = lp.Line
			}
		}
		if w.line == (reassemble.Chain{}) {
			return // no dif of the conversation yet
		}
	default:
		return
	}
	if w != m.wanted {
		m.wanted, c.wanted = w, w.line
		m.e.Prioritize(w.line, w.upTo)
	}
}
