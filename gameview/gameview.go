// Package gameview shows game states and their differences in the game's
// terms, as far as a schema's view names them: players, enemies, items,
// lifts and shots as tables, a region's elements, the full field tree as
// JSON, and diffs grouped by region. pmdump state and diff print through
// it, and the terminal UI shows the same text.
package gameview

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pmdump/pmdump/schema"
)

// Num formats a decoded number: integers as integers, others with up to 3
// decimals.
func Num(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 32)
}

// WriteGame prints a state in the game's terms, as far as the schema's
// view knows them: players, enemies, items, lifts, shots.
func WriteGame(w io.Writer, s *schema.Schema, st []byte) {
	v := s.View
	if v == nil {
		fmt.Fprintf(w, "schema %s names no players, enemies or items; use --region or --json\n", s.Name)
		for _, r := range s.Regions {
			fmt.Fprintf(w, "  region %s: %d bytes at %d\n", r.Name, r.Size, r.Offset)
		}
		return
	}
	block := 20
	if v.Level != nil && v.Level.Block > 0 {
		block = v.Level.Block
	}
	blk := func(x, y float64) string {
		return fmt.Sprintf("%d,%d", int(math.Floor(x/float64(block))), int(math.Floor(y/float64(block))))
	}
	if p := v.Players; p != nil {
		r := s.Region(p.Region)
		fmt.Fprintf(w, "Players\n")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  player\tx\ty\tblock\thealth\tshape\tcolor\tcontrols")
		if p.LateInputs != "" {
			fmt.Fprintf(tw, "\tlate inputs")
		}
		fmt.Fprintln(tw)
		for i := 0; r != nil && i < r.Count(); i++ {
			if a, _ := s.Get(st, p.Region, i, p.Active); a == 0 {
				continue
			}
			x, _ := s.Get(st, p.Region, i, p.X)
			y, _ := s.Get(st, p.Region, i, p.Y)
			h, _ := s.Get(st, p.Region, i, p.Health)
			sh, _ := s.Get(st, p.Region, i, p.Shape)
			co, _ := s.Get(st, p.Region, i, p.Color)
			var ctl []string
			for _, c := range p.Controls {
				if on, _ := s.Get(st, p.Region, i, c); on != 0 {
					ctl = append(ctl, c)
				}
			}
			if len(ctl) == 0 {
				ctl = []string{"-"}
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%s", i, Num(x), Num(y), blk(x, y), Num(h), Num(sh), Num(co), strings.Join(ctl, ","))
			if p.LateInputs != "" {
				li, _ := s.Get(st, p.Region, i, p.LateInputs)
				fmt.Fprintf(tw, "\t%s", Num(li))
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	things := func(t *schema.Things, title string) {
		if t == nil {
			return
		}
		r := s.Region(t.Region)
		if r == nil {
			return
		}
		rows := r.Count() / r.Dims[len(r.Dims)-1]
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		n := 0
		for i := 0; i < rows; i++ {
			typ, _ := s.GetLabel(st, t.Region, i, t.Type)
			if typ == 0 {
				continue
			}
			if n == 0 {
				fmt.Fprintf(tw, "  #\ttype\tx\ty\tblock\n")
			}
			n++
			x, _ := s.GetLabel(st, t.Pos, i, "x")
			y, _ := s.GetLabel(st, t.Pos, i, "y")
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", i, Num(typ), Num(x), Num(y), blk(x, y))
		}
		fmt.Fprintf(w, "%s (%d)\n", title, n)
		tw.Flush()
	}
	things(v.Enemies, "Enemies")
	things(v.Items, "Items")
	if l := v.Lifts; l != nil {
		r := s.Region(l.Region)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		n := 0
		for i := 0; r != nil && i < r.Count(); i++ {
			x, _ := s.Get(st, l.Region, i, l.X)
			y, _ := s.Get(st, l.Region, i, l.Y)
			name := ""
			if f := r.Field(l.Name); f != nil {
				_, name = schema.Value(st, r.Offset+i*r.Elem+f.Offset, f.Type, f.Size)
			}
			active := true
			if l.Active != "" {
				a, _ := s.Get(st, l.Region, i, l.Active)
				active = a != 0
			} else {
				active = x != 0 || y != 0 || name != ""
			}
			if !active {
				continue
			}
			if n == 0 {
				fmt.Fprintf(tw, "  #\tx\ty\tblock\tname\n")
			}
			n++
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%q\n", i, Num(x), Num(y), blk(x, y), name)
		}
		fmt.Fprintf(w, "Lifts (%d)\n", n)
		tw.Flush()
	}
	for _, name := range v.Shots {
		r := s.Region(name)
		if r == nil {
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		n := 0
		for i := 0; i < r.Count(); i++ {
			if a, _ := s.Get(st, name, i, "active"); a == 0 {
				continue
			}
			if n == 0 {
				fmt.Fprintf(tw, "  #\t%s\tx\ty\txinc\tyinc\n", r.Fields[1].Name)
			}
			n++
			who, _ := s.Get(st, name, i, r.Fields[1].Name)
			x, _ := s.Get(st, name, i, "x")
			y, _ := s.Get(st, name, i, "y")
			xi, _ := s.Get(st, name, i, "xinc")
			yi, _ := s.Get(st, name, i, "yinc")
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\n", i, Num(who), Num(x), Num(y), Num(xi), Num(yi))
		}
		fmt.Fprintf(w, "Shots %s (%d)\n", name, n)
		tw.Flush()
	}
}

// WriteRegion prints every element of a region that is not all zeros:
// records as name=value pairs, number arrays one row (first indexes) per line.
func WriteRegion(w io.Writer, r *schema.Region, st []byte) {
	fmt.Fprintf(w, "%s %v (%s): %d bytes at %d\n", r.Name, r.Dims, r.Doc, r.Size, r.Offset)
	zero := func(b []byte) bool {
		for _, c := range b {
			if c != 0 {
				return false
			}
		}
		return true
	}
	if r.Fields != nil {
		for i := 0; i < r.Count(); i++ {
			e := st[r.Offset+i*r.Elem : r.Offset+(i+1)*r.Elem]
			if zero(e) {
				continue
			}
			var b strings.Builder
			fmt.Fprintf(&b, "  %s%s", r.Name, idx(r.Index(i)))
			for _, f := range r.Fields {
				v, t := schema.Value(e, f.Offset, f.Type, f.Size)
				if f.Type == schema.Chars {
					fmt.Fprintf(&b, " %s=%q", f.Name, t)
				} else if v != 0 {
					fmt.Fprintf(&b, " %s=%s", f.Name, Num(v))
				}
			}
			fmt.Fprintln(w, b.String())
		}
		return
	}
	last := r.Dims[len(r.Dims)-1]
	row := last * r.Elem
	for i := 0; i < r.Count()/last; i++ {
		e := st[r.Offset+i*row : r.Offset+(i+1)*row]
		if zero(e) {
			continue
		}
		var b strings.Builder
		ix := r.Index(i * last)
		fmt.Fprintf(&b, "  %s%s:", r.Name, idx(ix[:len(ix)-1]))
		for k := 0; k < last; k++ {
			v, _ := schema.Value(e, k*r.Elem, r.Type, r.Elem)
			if l := r.Label(k); l != "" {
				fmt.Fprintf(&b, " %s=%s", l, Num(v))
			} else {
				fmt.Fprintf(&b, " %s", Num(v))
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

func idx(ix []int) string {
	var b strings.Builder
	for _, i := range ix {
		fmt.Fprintf(&b, "[%d]", i)
	}
	return b.String()
}

// JSON is the full field tree of a state: region name → elements;
// records are objects of fields, number arrays nested arrays.
func JSON(s *schema.Schema, st []byte, only string) map[string]any {
	out := map[string]any{}
	for i := range s.Regions {
		r := &s.Regions[i]
		if only != "" && r.Name != only {
			continue
		}
		out[r.Name] = RegionJSON(r, st)
	}
	return out
}

// RegionJSON is one region's elements, nested by its dimensions: records
// as objects of fields, numbers as numbers.
func RegionJSON(r *schema.Region, st []byte) any {
	elem := func(i int) any {
		off := r.Offset + i*r.Elem
		if r.Fields == nil {
			v, _ := schema.Value(st, off, r.Type, r.Elem)
			return jsonNum(v)
		}
		m := make(map[string]any, len(r.Fields))
		for _, f := range r.Fields {
			v, t := schema.Value(st, off+f.Offset, f.Type, f.Size)
			if f.Type == schema.Chars {
				m[f.Name] = t
			} else {
				m[f.Name] = jsonNum(v)
			}
		}
		return m
	}
	// Nest by dimensions.
	var build func(d, base int) any
	build = func(d, base int) any {
		if d == len(r.Dims) {
			return elem(base)
		}
		stride := 1
		for _, x := range r.Dims[d+1:] {
			stride *= x
		}
		arr := make([]any, r.Dims[d])
		for i := range arr {
			arr[i] = build(d+1, base+i*stride)
		}
		return arr
	}
	return build(0, 0)
}

// jsonNum makes a number JSON can carry (NaN and infinities become nil).
func jsonNum(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// WriteDiff prints changes grouped by region, with counts.
func WriteDiff(w io.Writer, sch *schema.Schema, a, b string, changes []schema.Change) {
	fmt.Fprintf(w, "diff %s → %s (schema %s)\n", a, b, sch.Name)
	counts := schema.Count(sch, changes)
	i := 0
	for _, rc := range counts {
		fmt.Fprintf(w, "%s: %d changed values, %d bytes\n", rc.Region, rc.Changes, rc.Bytes)
		for ; i < len(changes) && changes[i].Region == rc.Region; i++ {
			c := &changes[i]
			fmt.Fprintf(w, "  %s %s → %s", c.Path(), ChangeValue(c, false), ChangeValue(c, true))
			if c.Note != "" {
				fmt.Fprintf(w, " (%s)", c.Note)
			}
			fmt.Fprintln(w)
		}
	}
	total := 0
	for _, rc := range counts {
		total += rc.Changes
	}
	fmt.Fprintf(w, "%d changed values in %d regions\n", total, len(counts))
}

// ChangeValue is the old or (new) the new value of a change as text.
func ChangeValue(c *schema.Change, new bool) string {
	if c.Type == schema.Chars {
		if new {
			return strconv.Quote(c.NewText)
		}
		return strconv.Quote(c.OldText)
	}
	if new {
		return Num(c.New)
	}
	return Num(c.Old)
}
