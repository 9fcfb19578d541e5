package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/schema"
)

type diffOpts struct {
	pickFlags
	json       bool
	allPlayers bool
	region     string
}

func newDiffCmd() *cobra.Command {
	var o diffOpts
	c := &cobra.Command{
		Use:   "diff [flags] FILE A [B]",
		Short: "Show what changed in the game state between two frames",
		Long: `Diff compares the state a client held at frame A with the one it held at frame
B (each the latest acknowledged state at or before the frame, as "pmdump state"
picks it) and prints every value that changed, field by field, grouped by region
with counts per region: psyn[2].x 412 → 418.5, Ei[17][0] 3 → 0 (enemy removed),
l[40][12] 0 → 169. Regions without fields show their bytes.

--all-players compares what every client of one game held at frame A with
what the first client held at the same frame (desync hunting); B is not given
then. Each client's state is the newest it acknowledged at or before A (with
--sent, the newest the server sent it), never a sent state against
acknowledged ones. A game is the conversations with one server whose states
overlap in the capture; when the capture holds several, --conv N (or --player
or --client) picks the game of that client, which is then the reference.

JSON (--json) is one object per changed value: region, index (array of ints),
field (the field's name, or null), old, new (numbers decoded by type; text for
chars), path, and note when the change means something in the game.`,
		Example: `  pmdump diff capture.pcap --player 1 1200 1240
  pmdump diff capture.pcap --player 1 300 400 --slsn 1 --json | jq -c 'select(.region=="psyn")'
  pmdump diff capture.pcap --all-players 1200`,
		Args: cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error { return runDiff(cmd, args, &o) },
	}
	f := c.Flags()
	o.pickFlags.register(f)
	f.BoolVar(&o.json, "json", false, "one JSON object per changed value")
	f.BoolVar(&o.allPlayers, "all-players", false, "compare the state of every client of one game at frame A with the first client's (--conv picks the game)")
	f.StringVar(&o.region, "region", "", "only changes in region `NAME`")
	return c
}

func runDiff(cmd *cobra.Command, args []string, o *diffOpts) error {
	era, err := decode.ParseVersion(o.era)
	if err != nil {
		return usageError{err}
	}
	file, frames := args[0], args[1:]
	fa, err := strconv.Atoi(frames[0])
	if err != nil {
		return usagef("frame A %q is not a number", frames[0])
	}
	fb := fa
	if o.allPlayers {
		if len(frames) != 1 {
			return usagef("--all-players compares one frame: give A only")
		}
	} else {
		if len(frames) != 2 {
			return usagef("give two frames, A and B")
		}
		if fb, err = strconv.Atoi(frames[1]); err != nil {
			return usagef("frame B %q is not a number", frames[1])
		}
	}
	sel, err := o.selector(!o.allPlayers)
	if err != nil {
		return err
	}
	user, err := loadSchema(o.schema)
	if err != nil {
		return err
	}
	last := max(fa, fb)
	isel := sel
	if o.allPlayers {
		// Every client of the game is compared: rebuild them all, whichever
		// client --player, --client or --conv names.
		isel, last = engine.Selector{Player: -1}, -1
	}
	e, runErr := indexStates(cmd, []string{file}, era, isel, o.slsn, last)
	if e == nil {
		return runErr
	}
	defer e.Close()
	out := bufio.NewWriter(cmd.OutOrStdout())
	defer out.Flush()

	type side struct {
		label string
		pick  engine.PickedState
		data  []byte
	}
	open := func(p engine.PickedState) (side, error) {
		d, err := e.State(nil, p.Line, p.Index)
		if err != nil {
			return side{}, err
		}
		fmt.Fprintln(cmd.ErrOrStderr(), describePick(p, d))
		return side{fmt.Sprintf("%s (player %d) frame %d", p.Line.Client, p.Entry.Player, p.Entry.Frame.N), p, d}, nil
	}
	load := func(l reassemble.Chain, frame int) (side, error) {
		p, err := e.Pick(l, frame, o.slsn, o.sent)
		if err != nil {
			return side{}, pickError(err)
		}
		return open(p)
	}
	var pairs [][2]side
	if o.allPlayers {
		across, err := e.AcrossClients(sel, fa, o.slsn, o.sent)
		if err != nil {
			return pickError(err)
		}
		for _, m := range across.Missing {
			fmt.Fprintln(cmd.ErrOrStderr(), "pmdump:", m)
		}
		var sides []side
		for _, p := range across.Picks {
			s, err := open(p)
			if err != nil {
				fmt.Fprintln(cmd.ErrOrStderr(), "pmdump:", err)
				continue
			}
			sides = append(sides, s)
		}
		if len(sides) < 2 {
			return fmt.Errorf("frame %d: fewer than two clients of %s hold a state to compare", fa, across.Game)
		}
		frames := map[int32]bool{}
		for _, s := range sides {
			frames[s.pick.Entry.Frame.N] = true
		}
		if len(frames) > 1 && !o.sent {
			fmt.Fprintf(cmd.ErrOrStderr(), "pmdump: note: the clients last held different frames at frame %d, so the differences include the game's progress; --sent compares the states the server sent each of them for frame %d\n", fa, fa)
		}
		for _, s := range sides[1:] {
			pairs = append(pairs, [2]side{sides[0], s})
		}
	} else {
		l, err := e.LineOf(sel)
		if err != nil {
			return pickError(err)
		}
		a, err := load(l, fa)
		if err != nil {
			return err
		}
		b, err := load(l, fb)
		if err != nil {
			return err
		}
		pairs = append(pairs, [2]side{a, b})
	}
	for _, pr := range pairs {
		a, b := pr[0], pr[1]
		if len(a.data) != len(b.data) {
			return fmt.Errorf("states of %d and %d bytes cannot be compared", len(a.data), len(b.data))
		}
		sch := e.Schema(a.pick.Line, len(a.data))
		if user != nil && sch != user {
			return usagef("--schema %s describes %d-byte states; these states have %d bytes", user.Name, user.Size, len(a.data))
		}
		if o.region != "" && sch.Region(o.region) == nil {
			return usagef("schema %s has no region %q", sch.Name, o.region)
		}
		changes, err := schema.Diff(sch, a.data, b.data)
		if err != nil {
			return err
		}
		if o.region != "" {
			kept := changes[:0]
			for _, c := range changes {
				if c.Region == o.region {
					kept = append(kept, c)
				}
			}
			changes = kept
		}
		if o.json {
			var pair *[2]engine.PickedState
			if o.allPlayers {
				pair = &[2]engine.PickedState{a.pick, b.pick}
			}
			for i := range changes {
				writeChangeJSON(out, &changes[i], pair)
			}
			continue
		}
		gameview.WriteDiff(out, sch, a.label, b.label, changes)
	}
	return runErr
}

// writeChangeJSON prints one change as a JSON line; with pair (diff
// --all-players), it names the two clients compared.
func writeChangeJSON(w io.Writer, c *schema.Change, pair *[2]engine.PickedState) {
	o := openJSON(nil)
	if pair != nil {
		for i, k := range []string{"a", "b"} {
			p := pair[i]
			o.key(k)
			side := openJSON(o.b)
			side.str("client", p.Line.Client.String())
			side.int("conv", int64(p.Line.Conv))
			side.int("player", int64(p.Entry.Player))
			side.int("frame", int64(p.Entry.Frame.N))
			o.b = side.close()
		}
	}
	o.str("region", c.Region)
	o.key("index")
	o.b = append(o.b, '[')
	for i, x := range c.Index {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = strconv.AppendInt(o.b, int64(x), 10)
	}
	o.b = append(o.b, ']')
	if c.Field == "" {
		o.raw("field", []byte("null"))
	} else {
		o.str("field", c.Field)
	}
	if c.Type == schema.Chars {
		o.str("old", c.OldText)
		o.str("new", c.NewText)
	} else {
		o.float("old", c.Old)
		o.float("new", c.New)
	}
	o.str("path", c.Path())
	if c.Note != "" {
		o.str("note", c.Note)
	}
	w.Write(append(o.close(), '\n'))
}
