package tui

import (
	"fmt"
	"strings"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/packetfmt"
	"github.com/pmdump/pmdump/session"
)

// fit keeps the selected row on the screen whatever its size became,
// and reads the selected packet's details when it changed.
func (p *packetsModel) fit(c *env) {
	x := p.index(c)
	n := p.n(c)
	vis := c.lay.list.h - 1
	if p.top > max(n-vis, 0) {
		p.top = max(n-vis, 0)
	}
	if vis > 0 && n > 0 {
		if p.cur >= p.top+vis {
			p.top = p.cur - vis + 1
		}
		if p.cur < p.top {
			p.top = p.cur
		}
	}
	if n > 0 && x != nil {
		if pos := p.pos(p.cur); pos != p.detailAt || p.hex != p.detailHex {
			p.detailAt, p.detailHex = pos, p.hex
			p.detail = p.detailLines(x, pos)
		}
	}
}

// render draws the list and the selected packet's details.
func (p *packetsModel) render(c *env) []string {
	l := c.lay
	out := make([]string, 0, l.body.h)
	x := p.index(c)
	n := p.n(c)
	vis := l.list.h - 1
	marksAt := map[int]string{}
	for k, pos := range p.marks {
		marksAt[pos] = k
	}
	// The rows on the screen, in cells, so the columns can be sized to
	// what they show.
	type row struct {
		pos   int
		cells rowCells
		kind  session.Kind
		err   error
	}
	rows := make([]row, 0, vis)
	var line packetfmt.Line
	var rec session.Record
	for r := p.top; r < p.top+vis && r < n && x != nil; r++ {
		pos := p.pos(r)
		if err := x.Record(pos, &rec); err != nil {
			rows = append(rows, row{pos: pos, err: err})
			continue
		}
		rows = append(rows, row{pos: pos, cells: cells(&line, &rec), kind: rec.Kind})
	}
	var cols listColumns
	for _, r := range rows {
		if r.err == nil {
			cols.fit(&r.cells)
		}
	}
	cols.choose(l.list.w - 1)
	out = append(out, c.st.header.Render(fit(" "+cols.header(), l.list.w)))
	for i := 0; i < vis; i++ {
		if i >= len(rows) {
			if i == 0 && n == 0 {
				switch {
				case p.filter != nil && p.running:
					out = append(out, c.st.dim.Render("filtering…"))
				case p.filter != nil:
					out = append(out, c.st.dim.Render("no packet matches "+p.filter.String()))
				case !c.read:
					out = append(out, c.st.dim.Render("reading…"))
				default:
					out = append(out, c.st.dim.Render("no game packets"))
				}
				continue
			}
			out = append(out, "")
			continue
		}
		r := rows[i]
		if r.err != nil {
			out = append(out, c.st.err.Render(fmt.Sprintf("packet %d: %v", r.pos, r.err)))
			continue
		}
		text := cols.line(&r.cells)
		prefix := " "
		if k, ok := marksAt[r.pos]; ok {
			prefix = c.st.mark.Render(k)
		}
		style := c.st.dim
		switch {
		case p.top+i == p.cur:
			style = c.st.selected
		case r.kind == session.Malformed:
			style = c.st.err
		case r.kind == session.Unknown:
			style = c.st.warn
		default:
			style = style.UnsetForeground()
		}
		out = append(out, prefix+style.Render(fit(text, l.list.w-1)))
	}
	for len(out) < l.list.h {
		out = append(out, "")
	}
	// The detail pane.
	what := "Field tree"
	if p.hex {
		what = "Hex dump"
	}
	filt := "no filter"
	if p.filter != nil {
		filt = fmt.Sprintf("filter %s: %d matches", p.filter, len(p.rows))
		if p.running {
			filt += " so far"
		}
	}
	out = append(out, c.st.title.Render(fit(fmt.Sprintf("── %s (x) ── %s ", what, filt), l.detail.w)))
	if n > 0 && x != nil {
		detail := p.detail
		if pos := p.pos(p.cur); pos != p.detailAt || p.hex != p.detailHex {
			detail = p.detailLines(x, pos) // not fitted yet
		}
		for i := 0; i < l.detail.h-1 && i < len(detail); i++ {
			out = append(out, detail[i])
		}
	}
	return out
}

func (p *packetsModel) detailLines(x *engine.PacketIndex, pos int) []string {
	var r session.Record
	if err := x.Record(pos, &r); err != nil {
		return []string{err.Error()}
	}
	var b []byte
	if p.hex {
		// hex.Dump's lines are 78 columns: without the indent of the
		// command line's dump they fit an 80-column terminal.
		b = packetfmt.AppendHex(b, r.Packet.Raw)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for i, l := range lines {
			lines[i] = strings.TrimPrefix(l, "    ")
		}
		return lines
	}
	b = packetfmt.AppendTreeHeader(b, &r)
	b = r.Packet.AppendTree(b, "    ")
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}
