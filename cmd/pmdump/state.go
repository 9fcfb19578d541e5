package main

import (
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
)

type stateOpts struct {
	era    string
	player int
	client string
	frame  int
	slsn   int
	out    string
	sent   bool
}

func newStateCmd() *cobra.Command {
	var o stateOpts
	c := &cobra.Command{
		Use:   "state [flags] FILE...",
		Short: "Write the full game state a client held at a frame",
		Long: `State rebuilds every state of the capture into an index (difs and periodic
checkpoints, no full states kept), then rebuilds the state the client held at
frame N of level sequence K: the latest state at or before N that the client
acknowledged (a client acknowledges every dif it applies with a stak; --sent
considers every state the server sent). It says on stderr which state that is,
and writes the raw state bytes to -o (- for stdout).

Frame numbers restart at every level change, so without --slsn a frame that
exists in more than one level sequence is an error that lists them.`,
		Example: `  pmdump state capture.pcap --player 1 --frame 1200 -o state.bin
  pmdump state capture.pcap --player 2 --frame 300 --slsn 1 -o - | xxd | head`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runState(cmd, args, &o) },
	}
	f := c.Flags()
	f.StringVar(&o.era, "era", "auto", "protocol era: auto, legacy or modern")
	f.IntVar(&o.player, "player", -1, "the client with player number `P`")
	f.StringVar(&o.client, "client", "", "the client at `IP:PORT`")
	f.IntVar(&o.frame, "frame", -1, "game frame `N`")
	f.IntVar(&o.slsn, "slsn", -1, "level sequence `K`")
	f.StringVarP(&o.out, "output", "o", "", "write the raw state to `FILE` (- for stdout)")
	f.BoolVar(&o.sent, "sent", false, "consider every state the server sent, not only those the client acknowledged")
	return c
}

func runState(cmd *cobra.Command, args []string, o *stateOpts) error {
	era, err := decode.ParseEra(o.era)
	if err != nil {
		return usageError{err}
	}
	if o.frame < 0 {
		return usagef("--frame is required")
	}
	if o.player < 0 && o.client == "" {
		return usagef("--player or --client is required")
	}
	if o.out == "" {
		return usagef("-o FILE is required (- for stdout)")
	}
	cf := clientFilter{player: o.player}
	if o.client != "" {
		if cf.client, err = netip.ParseAddrPort(o.client); err != nil {
			return usagef("--client %q: %v", o.client, err)
		}
	}
	tl, runErr := buildTimeline(args, era, cmd.ErrOrStderr())
	if tl == nil {
		return runErr
	}
	defer tl.Close()
	// The client: by endpoint, or the one whose states carry the player.
	var client netip.AddrPort
	found := false
	for _, c := range tl.Clients() {
		es := tl.Entries(c)
		if (cf.client.IsValid() && c == cf.client) || (!cf.client.IsValid() && len(es) > 0 && es[len(es)-1].Player == cf.player) {
			client, found = c, true
			break
		}
	}
	if !found {
		return usagef("no states of that client in the capture")
	}
	slsn := o.slsn
	if slsn < 0 {
		ks := tl.SLSNs(client, int32(o.frame))
		switch len(ks) {
		case 0:
			return fmt.Errorf("frame %d: no state of %s rebuilt at or around it", o.frame, client)
		case 1:
			slsn = ks[0]
		default:
			s := make([]string, len(ks))
			for i, k := range ks {
				s[i] = fmt.Sprint(k)
			}
			return usagef("frame %d exists in level sequences %s: choose one with --slsn", o.frame, strings.Join(s, ", "))
		}
	}
	i := tl.Find(client, slsn, int32(o.frame), !o.sent)
	if i < 0 {
		what := "acknowledged"
		if o.sent {
			what = "rebuilt"
		}
		return fmt.Errorf("no state of %s %s at or before frame %d of level sequence %d", client, what, o.frame, slsn)
	}
	data, err := tl.State(nil, client, i)
	if err != nil {
		return err
	}
	e := tl.Entries(client)[i]
	acked := "never acknowledged"
	if e.Acked() {
		acked = "acknowledged " + e.AckTS.UTC().Format("15:04:05.000000")
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%s slsn %d frame %d: the state of frame %d (dif %d → %d, capture frame %d, %s), %d bytes, sha256 %s\n",
		client, slsn, o.frame, e.Frame.N, e.Src, e.Frame.N, e.CaptureN, acked, len(data), hex.EncodeToString(e.Sum[:]))
	if o.out == "-" {
		_, err = cmd.OutOrStdout().Write(data)
		return err
	}
	if err := os.WriteFile(o.out, data, 0o644); err != nil {
		return err
	}
	return runErr
}

// buildTimeline rebuilds every state of the inputs into a timeline index.
func buildTimeline(args []string, era decode.Era, stderr io.Writer) (*replay.Timeline, error) {
	p := newPipeline(args, era, stderr)
	tl := replay.NewTimeline(64<<20, "")
	var addErr error
	rb := newRebuilder(p, replay.Options{CheckpointEvery: checkpointEvery}, func(s *replay.State) {
		if err := tl.Add(s); err != nil && addErr == nil {
			addErr = err
		}
	})
	// States reach the timeline after their staks were read (they are
	// rebuilt on other goroutines): apply the acks once all are in.
	var acks []ack
	rb.onAck = func(a ack) { acks = append(acks, a) }
	runErr := rb.run()
	for _, a := range acks {
		tl.Ack(a.client, a.frame, a.ts)
	}
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

// checkpointEvery bounds the difs applied to rebuild any state: 32 inflates
// of a 112 KB state take a few milliseconds.
const checkpointEvery = 32
