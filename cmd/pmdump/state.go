package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

// pickFlags are the flags that pick a client's state, shared by state and
// diff.
type pickFlags struct {
	era    string
	player int
	client string
	slsn   int
	sent   bool
	schema string
}

func (p *pickFlags) register(f *pflag.FlagSet) {
	f.StringVar(&p.era, "era", "auto", "protocol era: auto, legacy or modern")
	f.IntVar(&p.player, "player", -1, "the client with player number `P`")
	f.StringVar(&p.client, "client", "", "the client at `IP:PORT`")
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
--json the full field tree, and -o writes the raw state bytes (- for stdout).
The layout is chosen by the state's size (the built-in schemas: 112384 modern,
106144 legacy; --schema FILE loads another); a state of unknown size is one raw
region.

Frame numbers restart at every level change, so without --slsn a frame that
exists in more than one level sequence is an error that lists them.`,
		Example: `  pmdump state capture.pcap --player 1 --frame 1200
  pmdump state capture.pcap --player 1 --frame 1200 --region Ei
  pmdump state capture.pcap --player 1 --frame 1200 --json | jq '.regions.psyn[1]'
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
	return c
}

func runState(cmd *cobra.Command, args []string, o *stateOpts) error {
	era, err := decode.ParseEra(o.era)
	if err != nil {
		return usageError{err}
	}
	if o.frame < 0 {
		return usagef("--frame N is required (a game frame, 0 or more)")
	}
	if o.player < 0 && o.client == "" {
		return usagef("--player or --client is required")
	}
	if o.player >= 0 && o.client != "" {
		return usagef("give --player or --client, not both")
	}
	if o.out != "" && (o.json || o.region != "") {
		return usagef("-o writes the raw state; --json and --region print it: choose one")
	}
	cf, err := newClientFilter(o.player, o.client)
	if err != nil {
		return err
	}
	user, err := loadSchema(o.schema)
	if err != nil {
		return err
	}
	tl, runErr := buildTimeline(args, era, cmd.ErrOrStderr())
	if tl == nil {
		return runErr
	}
	defer tl.Close()
	pick, err := pickState(tl, cf, o.frame, o.slsn, o.sent)
	if err != nil {
		return err
	}
	data, err := tl.State(nil, pick.client, pick.index)
	if err != nil {
		return err
	}
	e := tl.Entries(pick.client)[pick.index]
	fmt.Fprintf(cmd.ErrOrStderr(), "%s\n", pick.describe(e, o.frame, len(data)))
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
	sch := schema.For(len(data), user)
	if o.region != "" && sch.Region(o.region) == nil {
		var names []string
		for _, r := range sch.Regions {
			names = append(names, r.Name)
		}
		return usagef("schema %s has no region %q (it has %s)", sch.Name, o.region, strings.Join(names, ", "))
	}
	w := cmd.OutOrStdout()
	if o.json {
		obj := map[string]any{
			"client": pick.client.String(), "player": e.Player, "slsn": pick.slsn, "frame": e.Frame.N,
			"src": e.Src, "schema": sch.Name, "size": len(data), "sha256": hex.EncodeToString(e.Sum[:]),
			"regions": stateJSON(sch, data, o.region),
		}
		enc := json.NewEncoder(w)
		if err := enc.Encode(obj); err != nil {
			return err
		}
		return runErr
	}
	fmt.Fprintf(w, "State of %s (player %d), level sequence %d, frame %d; schema %s\n", pick.client, e.Player, pick.slsn, e.Frame.N, sch.Name)
	if o.region != "" {
		renderRegion(w, sch.Region(o.region), data)
	} else {
		renderGame(w, sch, data)
	}
	return runErr
}

// picked is the state a user asked for.
type picked struct {
	client netip.AddrPort
	slsn   int
	index  int
	sent   bool
}

func (p picked) describe(e replay.Entry, frame, size int) string {
	acked := "never acknowledged"
	if e.Acked() {
		acked = "acknowledged " + e.AckTime().UTC().Format("15:04:05.000000")
	}
	return fmt.Sprintf("%s slsn %d frame %d: the state of frame %d (dif %d → %d, capture frame %d, %s), %d bytes, sha256 %s",
		p.client, p.slsn, frame, e.Frame.N, e.Src, e.Frame.N, e.CaptureN, acked, size, hex.EncodeToString(e.Sum[:]))
}

// pickState finds the client and the state it held at a frame: the latest
// acknowledged (or, with sent, rebuilt) state at or before it, in the given
// level sequence or the only one that spans the frame.
func pickState(tl *replay.Timeline, cf clientFilter, frame, slsn int, sent bool) (picked, error) {
	p := picked{slsn: slsn, sent: sent}
	found := false
	for _, c := range tl.Clients() {
		es := tl.Entries(c)
		if (cf.client.IsValid() && c == cf.client) || (!cf.client.IsValid() && len(es) > 0 && int(es[len(es)-1].Player) == cf.player) {
			p.client, found = c, true
			break
		}
	}
	if !found {
		if cf.client.IsValid() {
			return p, usagef("no states of client %s in the capture", cf.client)
		}
		return p, usagef("no states of player %d in the capture", cf.player)
	}
	if p.slsn < 0 {
		ks := tl.SLSNs(p.client, int32(frame))
		switch len(ks) {
		case 0:
			return p, fmt.Errorf("frame %d: no state of %s rebuilt at or around it", frame, p.client)
		case 1:
			p.slsn = ks[0]
		default:
			s := make([]string, len(ks))
			for i, k := range ks {
				s[i] = fmt.Sprint(k)
			}
			return p, usagef("frame %d exists in level sequences %s: choose one with --slsn", frame, strings.Join(s, ", "))
		}
	}
	p.index = tl.Find(p.client, p.slsn, int32(frame), !sent)
	if p.index < 0 {
		what := "acknowledged"
		if sent {
			what = "rebuilt"
		}
		return p, fmt.Errorf("no state of %s %s at or before frame %d of level sequence %d", p.client, what, frame, p.slsn)
	}
	return p, nil
}

// buildTimeline rebuilds every state of the inputs into a timeline index.
func buildTimeline(args []string, era decode.Era, stderr io.Writer) (*replay.Timeline, error) {
	// The index of a long capture is large: ask the garbage collector to
	// keep the heap near what is live rather than let it double.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(timelineMemory))
	p := newPipeline(args, era, stderr)
	tl := replay.NewTimeline(16<<20, "")
	var addErr error
	// A stak is read before the state it acknowledges reaches the timeline
	// (states are rebuilt on other goroutines): hold each ack until the
	// states of every dif that ended before it are in.
	type heldAck struct {
		ack
		after int // states with Seq < after must be in first
	}
	var acks []heldAck
	// A new session of a client starts a new line once the states of the
	// old one are in (their acks, read before, are applied by then).
	type restart struct {
		client netip.AddrPort
		from   int // the first Seq of the new session
	}
	var restarts []restart
	var rb *rebuilder
	apply := func(upTo int) {
		k := 0
		for ; k < len(acks) && acks[k].after <= upTo; k++ {
			a := acks[k]
			tl.Ack(a.client, a.frame, a.ts)
		}
		acks = append(acks[:0], acks[k:]...)
	}
	rb = newRebuilder(p, replay.Options{CheckpointEvery: checkpointEvery}, func(s *replay.State) {
		for len(restarts) > 0 && restarts[0].from <= s.Seq {
			tl.Restart(restarts[0].client)
			restarts = restarts[1:]
		}
		if err := tl.Add(s); err != nil && addErr == nil {
			addErr = err
		}
		apply(s.Seq + 1)
	})
	rb.onAck = func(a ack) { acks = append(acks, heldAck{a, rb.b.Added()}) }
	rb.onRestart = func(c netip.AddrPort) { restarts = append(restarts, restart{c, rb.b.Added()}) }
	runErr := rb.run()
	apply(math.MaxInt)
	if len(p.unreadable) == len(args) {
		tl.Close()
		return nil, runErr
	}
	if addErr != nil {
		tl.Close()
		return nil, addErr
	}
	return tl, runErr
}

// timelineMemory is the soft memory limit while indexing: the index of a
// one-hour 8-player game is about 120 MB.
const timelineMemory = 224 << 20

// checkpointEvery bounds the difs applied to rebuild any state: 32 inflates
// of a 112 KB state take a few milliseconds.
const checkpointEvery = 32
