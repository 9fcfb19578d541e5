package tui

import (
	"context"
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/filter"
)

// check says whether a filter expression is valid, for the prompt.
func (p *packetsModel) check(src string) string {
	if strings.TrimSpace(src) == "" {
		return "✓ (every packet)"
	}
	if _, err := filter.Compile(src); err != nil {
		return "✗ " + err.Error()
	}
	return "✓"
}

// historyStep moves in the filter history.
func (p *packetsModel) historyStep(up bool, cur string) string {
	if len(p.history) == 0 {
		return cur
	}
	if up {
		p.histPos = max(p.histPos-1, 0)
	} else {
		p.histPos = min(p.histPos+1, len(p.history))
		if p.histPos == len(p.history) {
			return ""
		}
	}
	return p.history[p.histPos]
}

// complete completes the last word of a filter expression with the names
// a filter can use (their longest common prefix when several fit, as
// Wireshark's filter bar does) and returns the names that fit when there
// are several.
func complete(src string) (string, []string) {
	i := len(src)
	for i > 0 && (isWord(src[i-1])) {
		i--
	}
	word := src[i:]
	if word == "" {
		return src, nil
	}
	var fits []string
	for _, n := range filterNames {
		if strings.HasPrefix(n, word) {
			fits = append(fits, n)
		}
	}
	if len(fits) == 0 {
		return src, nil
	}
	common := fits[0]
	for _, f := range fits[1:] {
		for !strings.HasPrefix(f, common) {
			common = common[:len(common)-1]
		}
	}
	if len(fits) == 1 {
		return src[:i] + common + " ", nil
	}
	return src[:i] + common, fits
}

// candidatesNote is the prompt's note listing the names a tab could
// complete to.
func candidatesNote(fits []string) string {
	return fmt.Sprintf("tab: %d names: %s", len(fits), strings.Join(fits, " "))
}

var filterNames = filter.Names()

// filterChunk is how many packets one filter command goes through.
var filterChunk = 1 << 16

func isWord(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// filterMsg is a filter's matches, from the goroutine that ran it.
type filterMsg struct {
	gen     int
	rows    []int32
	scanned int
	err     error
}

// applyFilter compiles and runs a filter; "" shows every packet.
func (p *packetsModel) applyFilter(c *env, src string) tea.Cmd {
	p.cancelFilter()
	p.writeTo = "" // a write asked for under the filter before is dropped
	x := p.index(c)
	var keep int
	if x != nil && p.n(c) > 0 {
		keep = p.pos(p.cur)
	}
	if src == "" {
		p.filter, p.rows = nil, nil
		p.setCur(c, keep)
		c.msg = ""
		return nil
	}
	f, err := filter.Compile(src)
	if err != nil {
		c.setErr(err)
		return nil
	}
	if len(p.history) == 0 || p.history[len(p.history)-1] != src {
		p.history = append(p.history, src)
	}
	p.filter, p.rows, p.scanned = f, nil, 0
	p.cur, p.top = 0, 0
	p.detailAt = -1
	p.keep, p.placed = keep, false
	return p.runFilter(c, f, 0)
}

// runFilter runs the filter over the packets from position from on, off
// the UI goroutine; a newer filter cancels it.
func (p *packetsModel) runFilter(c *env, f *filter.Filter, from int) tea.Cmd {
	x := p.index(c)
	if x == nil {
		return nil
	}
	p.gen++
	gen := p.gen
	ctx, cancel := context.WithCancel(c.ctx)
	p.cancel = cancel
	p.running = true
	// A chunk at a time, so the first matches show while the rest are
	// filtered.
	to := min(x.Len(), from+filterChunk)
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = filterMsg{gen: gen, err: recovered(fmt.Sprintf("filter %s failed", f), r)}
			}
		}()
		var rows []int32
		err := x.Filter(ctx, f, from, to, func(i int) bool {
			rows = append(rows, int32(i))
			return true
		})
		return filterMsg{gen: gen, rows: rows, scanned: to, err: err}
	}
}

func (p *packetsModel) cancelFilter() {
	if p.cancel != nil {
		p.cancel()
		p.cancel = nil
	}
	p.running = false
}

func (p *packetsModel) onFilter(c *env, msg filterMsg) tea.Cmd {
	if msg.gen != p.gen || p.filter == nil {
		return nil // a filter since replaced
	}
	p.cancelFilter() // this chunk is done: release its context
	if msg.err != nil {
		c.setErr(fmt.Errorf("filter: %w", msg.err))
		return nil
	}
	p.rows = append(p.rows, msg.rows...)
	p.scanned = msg.scanned
	more := p.scanned < p.index(c).Len()
	if !p.placed && (!more || len(p.rows) > 0 && int(p.rows[len(p.rows)-1]) >= p.keep) {
		// the packet selected before, or the nearest match after it
		p.placed = true
		p.setCur(c, p.rowOf(c, p.keep))
	} else if p.atEnd && p.placed {
		p.setCur(c, len(p.rows)-1)
	}
	if more {
		then := ""
		if p.writeTo != "" {
			then = "; then writing them to " + p.writeTo
		}
		c.setMsg("filtering: %d matches in %d of %d packets%s", len(p.rows), p.scanned, p.index(c).Len(), then)
		return p.runFilter(c, p.filter, p.scanned)
	}
	if h := p.filter.Hint(); len(p.rows) == 0 && h != "" {
		c.setMsg("no packet of %d matches %s: %s", p.scanned, p.filter, h)
	} else {
		c.setMsg("%d of %d packets match %s", len(p.rows), p.scanned, p.filter)
	}
	if to := p.writeTo; to != "" {
		p.writeTo = ""
		return p.writeShown(c, to) // asked for while the filter ran
	}
	return nil
}
