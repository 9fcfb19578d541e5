package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/gameview"
	"github.com/pmdump/pmdump/levelmap"
)

// pickFlags are the flags that pick a client's state, shared by state and
// diff.
type pickFlags struct {
	era    string
	player int
	client string
	conv   int
	slsn   int
	sent   bool
	schema string
}

func (p *pickFlags) register(f *pflag.FlagSet) {
	f.StringVar(&p.era, "era", "auto", eraHelp)
	f.IntVar(&p.player, "player", -1, "the client with player number `P`")
	f.StringVar(&p.client, "client", "", "the client at `IP:PORT`")
	f.IntVar(&p.conv, "conv", 0, "the client of conversation `N` (the numbers pmdump stats prints)")
	f.IntVar(&p.slsn, "slsn", -1, "level sequence `K`")
	f.BoolVar(&p.sent, "sent", false, "consider every state the server sent, not only those the client acknowledged")
	f.StringVar(&p.schema, "schema", "", "state layout `FILE` (JSON) for a state size the built-in schemas do not know")
}

type stateOpts struct {
	pickFlags
	frame  int
	out    string
	region string
	json   bool
	map_   bool
}

func newStateCmd() *cobra.Command {
	var o stateOpts
	c := &cobra.Command{
		Use:   "state [flags] FILE...",
		Short: "Show or write the full game state a client held at a frame",
		Long: `State rebuilds every state of the capture into an index (difs and periodic
checkpoints, no full states kept), then rebuilds the state the client held at
frame N of level sequence K: the latest state at or before N that the client
acknowledged (a client acknowledges every dif it applies with a stak; --sent
considers every state the server sent). It says on stderr which state that is.

It prints the state in the game's terms: active players with position (pixels
and 20-pixel blocks), health, shape, color, controls; active enemies and items by
type and position; lifts; shots. --region NAME prints one region's elements,
--json the full field tree, --map draws the level (100 lines of 100
characters, one per block, with a legend), and -o writes the raw state bytes (- for stdout).
The layout is chosen by the state's size (the built-in schemas: 112384 modern,
106144 legacy; --schema FILE loads another); a state of unknown size is one raw
region.

Frame numbers restart at every level change, so without --slsn a frame that
exists in more than one level sequence is an error that lists them.`,
		Example: `  pmdump state capture.pcap --player 1 --frame 1200
  pmdump state capture.pcap --player 1 --frame 1200 --region Ei
  pmdump state capture.pcap --player 1 --frame 1200 --json | jq '.regions.psyn[1]'
  pmdump state capture.pcap --player 1 --frame 1200 --map
  pmdump state capture.pcap --player 1 --frame 1200 -o state.bin
  pmdump state capture.pcap --player 2 --frame 300 --slsn 1 -o - | xxd | head`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runState(cmd, args, &o) },
	}
	f := c.Flags()
	o.pickFlags.register(f)
	f.IntVar(&o.frame, "frame", -1, "game frame `N`")
	f.StringVarP(&o.out, "output", "o", "", "write the raw state to `FILE` (- for stdout)")
	f.StringVar(&o.region, "region", "", "print only region `NAME` (psyn, Ei, l, …), every element that is not all zeros")
	f.BoolVar(&o.json, "json", false, "print the full field tree as JSON")
	f.BoolVar(&o.map_, "map", false, "draw the level: 100 lines of 100 characters (row y from the top, column x from the left, one per 20-pixel block) with players, enemies, items, lifts and shots over the tiles, then a legend")
	return c
}

func runState(cmd *cobra.Command, args []string, o *stateOpts) error {
	era, err := decode.ParseVersion(o.era)
	if err != nil {
		return usageError{err}
	}
	if o.frame < 0 {
		return usagef("--frame N is required (a game frame, 0 or more)")
	}
	sel, err := o.selector(true)
	if err != nil {
		return err
	}
	if o.out != "" && (o.json || o.region != "" || o.map_) {
		return usagef("-o writes the raw state; --json, --region and --map print it: choose one")
	}
	if o.map_ && (o.json || o.region != "") {
		return usagef("--map draws the level; --json and --region print fields: choose one")
	}
	if o.out != "" && o.schema != "" {
		return usagef("-o writes the raw state: --schema has no effect on it")
	}
	user, err := loadSchema(o.schema)
	if err != nil {
		return err
	}
	e, runErr := indexStates(cmd, args, era, sel, o.slsn, o.frame)
	if e == nil {
		return runErr
	}
	defer e.Close()
	l, err := e.LineOf(sel)
	if err != nil {
		return pickError(err)
	}
	pick, err := e.Pick(l, o.frame, o.slsn, o.sent)
	if err != nil {
		return pickError(err)
	}
	data, err := e.State(nil, pick.Line, pick.Index)
	if err != nil {
		return err
	}
	en := pick.Entry
	fmt.Fprintf(cmd.ErrOrStderr(), "%s\n", describePick(pick, data))
	if o.out != "" {
		if o.out == "-" {
			_, err = cmd.OutOrStdout().Write(data)
		} else {
			err = os.WriteFile(o.out, data, 0o644)
		}
		if err != nil {
			return err
		}
		return runErr
	}
	sch := e.Schema(pick.Line, len(data))
	if user != nil && sch != user {
		return usagef("--schema %s describes %d-byte states; this state has %d bytes", user.Name, user.Size, len(data))
	}
	if o.region != "" && sch.Region(o.region) == nil {
		var names []string
		for _, r := range sch.Regions {
			names = append(names, r.Name)
		}
		return usagef("schema %s has no region %q (it has %s)", sch.Name, o.region, strings.Join(names, ", "))
	}
	w := cmd.OutOrStdout()
	if o.map_ {
		m, err := levelmap.Read(sch, data)
		if err != nil {
			return fmt.Errorf("--map: schema %s: %w", sch.Name, err)
		}
		if _, err := w.Write(m.Text()); err != nil {
			return err
		}
		fmt.Fprint(w, levelmap.Legend())
		return runErr
	}
	if o.json {
		sum := sha256.Sum256(data)
		obj := map[string]any{
			"client": pick.Line.Client.String(), "conv": pick.Line.Conv, "player": en.Player, "slsn": pick.SLSN, "frame": en.Frame.N,
			"src": en.Src, "schema": sch.Name, "size": len(data), "sha256": hex.EncodeToString(sum[:]),
			"regions": gameview.JSON(sch, data, o.region),
		}
		enc := json.NewEncoder(w)
		if err := enc.Encode(obj); err != nil {
			return err
		}
		return runErr
	}
	fmt.Fprintf(w, "State of %s (player %d), level sequence %d, frame %d; schema %s\n", pick.Line.Client, en.Player, pick.SLSN, en.Frame.N, sch.Name)
	if o.region != "" {
		gameview.WriteRegion(w, sch.Region(o.region), data)
	} else {
		gameview.WriteGame(w, sch, data)
	}
	return runErr
}

// selector parses --player, --client and --conv; with need, one of them is
// required.
func (p *pickFlags) selector(need bool) (engine.Selector, error) {
	sel := engine.Selector{Player: p.player, Conv: p.conv}
	if p.player < -1 || p.player > decode.MaxPlayer {
		return sel, usagef("--player %d: players are numbered %d to %d", p.player, decode.MinPlayer, decode.MaxPlayer)
	}
	if p.conv < 0 {
		return sel, usagef("--conv %d: conversations are numbered from 1", p.conv)
	}
	if p.client != "" {
		var err error
		if sel.Client, err = netip.ParseAddrPort(p.client); err != nil {
			return sel, usagef("--client %q: %v", p.client, err)
		}
	}
	if need && sel.Any() {
		return sel, usagef("--player, --client or --conv is required")
	}
	return sel, nil
}

// pickError makes the user's errors among the engine's usage errors, with
// the flag that settles them.
func pickError(err error) error {
	var amb *engine.AmbiguousError
	var nf *engine.NotFoundError
	var sc *engine.SLSNChoiceError
	var gc *engine.GameChoiceError
	switch {
	case errors.As(err, &amb):
		return usageError{flagHint{err, "; choose one with --conv"}}
	case errors.As(err, &gc):
		return usageError{flagHint{err, "; choose one with --conv (any of its conversations)"}}
	case errors.As(err, &sc):
		return usageError{flagHint{err, ": choose one with --slsn"}}
	case errors.As(err, &nf):
		return usageError{err}
	}
	return err
}

// flagHint is an engine error with the flag that settles it.
type flagHint struct {
	err  error
	hint string
}

func (h flagHint) Error() string { return h.err.Error() + h.hint }
func (h flagHint) Unwrap() error { return h.err }

// describePick says which state a pick is and what the user should know
// about it, with the flags that give the others.
func describePick(p engine.PickedState, state []byte) string {
	s := p.Summary(state)
	if n := p.NewerNote(); n != "" {
		s += "\nnote: " + n + "; --sent gives that one"
	}
	if n := p.PastNote(); n != "" {
		s += "\nnote: " + n
	}
	return s
}

// indexStates rebuilds every state of the inputs into the engine's
// timeline. When the selector names one conversation and slsn one level
// sequence, it stops once that level has moved past frame (engine.PastPick):
// nothing later changes which state the client held then.
func indexStates(cmd *cobra.Command, args []string, era decode.Version, sel engine.Selector, slsn, frame int) (*engine.Engine, error) {
	// The index of a long capture is large: ask the garbage collector to
	// keep the heap near what is live rather than let it double.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(timelineMemory))
	stop := new(engine.Stopper)
	cfg := engine.Config{Era: era, Work: engine.Timeline, Stopper: stop}
	if !sel.Any() {
		cfg.Select = &sel // only the states asked for are rebuilt
	}
	if sel.Conv != 0 && slsn >= 0 && frame >= 0 {
		cfg.OnEvent = func(ev engine.Event) {
			if s, ok := ev.(engine.StateEvent); ok && s.State.Conv == sel.Conv && engine.PastPick(s.State, slsn, frame) {
				stop.Stop()
			}
		}
	}
	return drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, true)
}

// timelineMemory is the soft memory limit while indexing: the index of a
// one-hour 8-player game is about 120 MB.
const timelineMemory = 224 << 20
