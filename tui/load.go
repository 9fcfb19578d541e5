package tui

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
	"github.com/pmdump/pmdump/levelmap"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// stateMsg is a loaded state (and diff), from the goroutine that
// rebuilt it.
type stateMsg struct {
	key     stateKey
	ent     replay.Entry
	sch     *schema.Schema
	text    []string
	lmap    *levelmap.Map
	err     error
	diff    []string
	changed []bool
	took    time.Duration
	// pending: what is shown depends on states the rebuild has not
	// reached yet; it is loaded again as they come.
	pending bool
	rebuilt int // the states rebuilt when the load started
}

// load rebuilds a state and what the view shows of it; it runs off the UI
// goroutine.
func load(e *engine.Engine, user *schema.Schema, k stateKey) stateMsg {
	t0 := time.Now()
	out := stateMsg{key: k, rebuilt: e.Progress().Rebuilt}
	es := e.Entries(nil, k.line, k.i, k.i+1)
	if len(es) == 0 {
		out.err = fmt.Errorf("state %d of %s is gone", k.i, k.line)
		return out
	}
	out.ent = es[0]
	if st := out.ent.Status; st != replay.OK {
		out.err = fmt.Errorf("the dif %d→%d is %s (%d of %d pieces): no state was rebuilt from it; ←→ move to another", out.ent.Src, out.ent.N, st, out.ent.Pieces, out.ent.Count)
		return out
	}
	data, err := e.State(nil, k.line, k.i)
	if err != nil {
		out.err = err
		return out
	}
	out.sch = e.Schema(k.line, len(data))
	var b bytes.Buffer
	gameview.WriteGame(&b, out.sch, data)
	out.text = strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	out.lmap, _ = levelmap.Read(out.sch, data)
	if k.diff {
		var d bytes.Buffer
		mark := func(ch []schema.Change) {
			if out.lmap != nil {
				out.changed = out.lmap.Changed(out.changed, out.sch, ch)
			}
		}
		here := describe(k.line, &out.ent)
		switch {
		case k.across:
			// The engine's rule, as diff --all-players: every client's
			// acknowledged state at this frame, this client's too.
			a, err := e.AcrossClients(engine.Selector{Conv: k.line.Conv, Client: k.line.Client, Player: -1}, int(out.ent.N), out.ent.SLSN, false)
			var nr *engine.NotRebuiltError
			if errors.As(err, &nr) {
				out.pending = true
				fmt.Fprintf(&d, "every client at level sequence %d frame %d: %v; the comparison shows here once it is\n", out.ent.SLSN, out.ent.N, err)
				break
			}
			if err != nil {
				fmt.Fprintf(&d, "every client at level sequence %d frame %d: %v\n", out.ent.SLSN, out.ent.N, err)
				break
			}
			ref := a.Picks[0]
			fmt.Fprintf(&d, "every client of %s at level sequence %d frame %d, as each acknowledged it, against %s\n", a.Game, out.ent.SLSN, out.ent.N, describe(ref.Line, &ref.Entry))
			if a.Pending {
				out.pending = true
				d.WriteString("the rebuild has not taken every client to this frame yet: the comparison is made again as their states come\n")
			}
			for _, err := range a.Missing {
				fmt.Fprintf(&d, "%v\n", err)
			}
			if len(a.Picks) < 2 {
				d.WriteString("no other client of this game holds a state at this frame: nothing to compare\n")
				break
			}
			base, err := e.State(nil, ref.Line, ref.Index)
			if err != nil {
				fmt.Fprintf(&d, "%s: state %d: %v\n", ref.Line, ref.Index, err)
				break
			}
			for _, p := range a.Picks[1:] {
				other, err := e.State(nil, p.Line, p.Index)
				if err != nil || len(other) != len(base) {
					fmt.Fprintf(&d, "%s: state %d: cannot compare (%v)\n", p.Line, p.Index, err)
					continue
				}
				ch, err := schema.Diff(out.sch, base, other)
				if err != nil {
					fmt.Fprintf(&d, "%s: %v\n", p.Line, err)
					continue
				}
				mark(ch)
				gameview.WriteDiff(&d, out.sch, describe(ref.Line, &ref.Entry), describe(p.Line, &p.Entry), ch)
			}
		case k.hasA:
			a, err := e.State(nil, k.a.line, k.a.i)
			if err != nil {
				out.err = fmt.Errorf("state A: %w", err)
				return out
			}
			if len(a) != len(data) {
				d.WriteString("A and B have different sizes: no diff\n")
				break
			}
			ch, err := schema.Diff(out.sch, a, data)
			if err != nil {
				out.err = err
				return out
			}
			mark(ch)
			gameview.WriteDiff(&d, out.sch, describe(k.a.line, &k.a.ent), here, ch)
		default:
			d.WriteString("Press a to mark this state as A, move to another state B (←→, [ ], :), and the diff A → B shows here.\n")
			d.WriteString("Press A to compare every client's state at this frame (desync hunting).\n")
		}
		out.diff = strings.Split(strings.TrimSuffix(d.String(), "\n"), "\n")
	}
	out.took = time.Since(t0)
	return out
}
