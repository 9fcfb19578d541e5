package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/serve"
)

type serveOpts struct {
	player int
	listen string
	conv   int
	era    string
	speed  float64
	from   int
	slsn   int
	loop   bool
	exit   bool
}

func newServeCmd() *cobra.Command {
	var o serveOpts
	c := &cobra.Command{
		Use:   "serve FILE… --player P --listen ADDR",
		Short: "Play the server of a recorded game to real game clients",
		Long: `serve acts as the recorded game's server towards real game clients, which then
show the recorded game as it happened. It rebuilds every state the server sent
player P in the capture, then listens on ADDR: it answers a client's 1234 with
a 5678 from a new socket for that client (as the game does), its join request
with the recorded join reply of player P, and sends it the recorded states at
their recorded times (÷ --speed), each as the game would: a dif (base − new,
bytewise) against the newest state the client has acknowledged with stak (an
all-zero base, src 0, when it has none), zlib level 7, in stdf pieces of 1000
bytes with the era's header. It follows the recording's level changes, answers
ping with pong and, in the legacy era, sends the recorded sdat stream too.

Several clients may watch at once, each with its own bases. A status line
shows each client, the last state sent, its last ack and how many frames it is
behind. --from FRAME (with --slsn K when the frame is in several level
sequences) starts at that frame; at the end the last state is sent again until
the client has it, and --loop starts over as a new level.`,
		Example: `  pmdump serve game.pcap --player 1 --listen :24785
  pmdump serve game.pcap --player 2 --listen 127.0.0.1:24785 --speed 0.5 --from 1200 --slsn 1`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, args, &o) },
	}
	f := c.Flags()
	f.IntVar(&o.player, "player", -1, "serve the states of player `P` (1..7)")
	f.StringVar(&o.listen, "listen", ":24785", "listen on `ADDR` (host:port) for the clients' handshake")
	f.IntVar(&o.conv, "conv", 0, "take player P from conversation `N` (as pmdump stats numbers them)")
	f.StringVar(&o.era, "era", "auto", "protocol era: auto, legacy or modern")
	f.Float64Var(&o.speed, "speed", 1, "speed multiplier `X` of the recorded timing")
	f.IntVar(&o.from, "from", -1, "start at game frame `FRAME`")
	f.IntVar(&o.slsn, "slsn", -1, "level sequence `K` of --from")
	f.BoolVar(&o.loop, "loop", false, "serve the recording again and again")
	f.BoolVar(&o.exit, "exit-when-done", false, "exit once every client that joined has been served the whole recording")
	return c
}

func runServe(cmd *cobra.Command, args []string, o *serveOpts) error {
	era, err := decode.ParseEra(o.era)
	if err != nil {
		return usageError{err}
	}
	switch {
	case o.player < 0 && o.conv == 0:
		return usagef("--player P (or --conv N) is required")
	case o.speed <= 0:
		return usagef("--speed must be positive")
	case o.slsn >= 0 && o.from < 0:
		return usagef("--slsn needs --from")
	case o.loop && o.exit:
		return usagef("--loop never ends: it does not go with --exit-when-done")
	}
	laddr, err := net.ResolveUDPAddr("udp", o.listen)
	if err != nil {
		return usagef("--listen: %v", err)
	}
	stderr := cmd.ErrOrStderr()
	rec, err := serve.Load(args, serve.LoadOptions{Player: o.player, Conv: o.conv, Era: era})
	if err != nil {
		var ie *serve.InputError
		if errors.As(err, &ie) {
			return inputError{err}
		}
		return usageError{err}
	}
	if o.conv != 0 && o.player >= 0 && rec.Player != o.player {
		return usagef("conversation %d is player %d, not %d", o.conv, rec.Player, o.player)
	}
	start := 0
	if o.from >= 0 {
		if start, err = fromState(rec, o.from, o.slsn); err != nil {
			return usageError{err}
		}
	}
	ln, err := net.ListenUDP("udp", laddr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	defer ln.Close()
	first, last := rec.States[start], rec.States[len(rec.States)-1]
	fmt.Fprintf(cmd.OutOrStdout(), "serving player %d (conversation %d, %s era, %d-byte states): %d states, level sequence %d frame %d to %d frame %d, %.1f s at speed %g, on %s\n",
		rec.Player, rec.Conv, rec.Era, rec.Size, len(rec.States)-start, first.SLSN, first.Frame, last.SLSN, last.Frame,
		(last.At-first.At).Seconds()/o.speed, o.speed, ln.LocalAddr())

	term := isTerminal(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logf := func(format string, a ...any) {
		if term {
			fmt.Fprint(stderr, "\r\033[K")
		}
		fmt.Fprintf(stderr, format+"\n", a...)
	}
	srv, err := serve.New(rec, ln, serve.Options{Speed: o.speed, Start: start, Loop: o.loop, Logf: logf})
	if err != nil {
		return usageError{err}
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx) }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	lastLine := time.Now()
	for {
		select {
		case err := <-done:
			if term {
				fmt.Fprintln(stderr)
			}
			return err
		case <-tick.C:
		}
		st := srv.Status()
		if term {
			fmt.Fprint(stderr, "\r\033[K", statusLine(st))
		} else if time.Since(lastLine) >= 5*time.Second && len(st) > 0 {
			fmt.Fprintln(stderr, statusLine(st))
			lastLine = time.Now()
		}
		if o.exit && len(st) > 0 && allDone(st) {
			stop()
		}
	}
}

// fromState finds the first state at or after frame in level sequence
// slsn, or with slsn -1 in the one level sequence whose states span frame.
func fromState(rec *serve.Recording, frame, slsn int) (int, error) {
	if slsn < 0 {
		type span struct{ slsn, lo, hi int }
		var spans []span
		for _, s := range rec.States {
			if n := len(spans); n == 0 || spans[n-1].slsn != s.SLSN {
				spans = append(spans, span{s.SLSN, int(s.Frame), int(s.Frame)})
			} else {
				spans[n-1].hi = int(s.Frame)
			}
		}
		var in []int
		for _, sp := range spans {
			if sp.lo <= frame && frame <= sp.hi {
				in = append(in, sp.slsn)
			}
		}
		switch len(in) {
		case 0:
			return 0, fmt.Errorf("--from %d: no level sequence of the recording has that frame", frame)
		case 1:
			slsn = in[0]
		default:
			return 0, fmt.Errorf("--from %d: the frame is in level sequences %v; pick one with --slsn", frame, in)
		}
	}
	if i := rec.Find(slsn, int32(frame)); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("--from %d --slsn %d: no state at or after it", frame, slsn)
}

func allDone(st []serve.ClientStatus) bool {
	for _, c := range st {
		if c.Joined && !c.Done && !c.Closed {
			return false
		}
	}
	return true
}

// statusLine shows each client: its endpoint, the last state sent, the
// newest it acknowledged and how far behind it is.
func statusLine(st []serve.ClientStatus) string {
	if len(st) == 0 {
		return "waiting for clients"
	}
	var b strings.Builder
	for i, c := range st {
		if i > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s ", c.Client)
		switch {
		case c.Closed:
			b.WriteString("gone")
			continue
		case !c.Joined:
			b.WriteString("joining")
			continue
		}
		fmt.Fprintf(&b, "p%d sent %d:%d", c.Player, c.SentSLSN, c.SentAt)
		if c.AckFrame < 0 {
			b.WriteString(" no ack")
		} else {
			fmt.Fprintf(&b, " ack %d:%d", c.AckSLSN, c.AckFrame)
		}
		if c.Behind >= 0 {
			fmt.Fprintf(&b, " (%d behind)", c.Behind)
		}
		if c.Done {
			b.WriteString(" done")
		}
	}
	return b.String()
}
