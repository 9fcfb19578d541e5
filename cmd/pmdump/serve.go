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
behind, then what became of the clients no longer served. --from FRAME (with
--slsn K when the frame is in several level sequences) starts at that frame; at
the end the last state is sent again until the client has it (to a legacy
client, at a frame ahead of its own), and --loop starts over as a new level.

Any host that reaches ADDR can join (":24785" is every interface): a client is
sent at most 1 s or 128 KB of difs before it acknowledges one and then only what
its acks earn, is dropped after 2.5 s without an ack (as the legacy game does
after 100 frames), and a handshake not followed by a join is closed after 5 s
(64 open at most, 8 per address).`,
		Example: `  pmdump serve game.pcap --player 1 --listen :24785
  pmdump serve game.pcap --player 2 --listen 127.0.0.1:24785 --speed 0.5 --from 1200 --slsn 1`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runServe(cmd, args, &o) },
	}
	f := c.Flags()
	f.IntVar(&o.player, "player", -1, "serve the states of player `P` (1..7)")
	f.StringVar(&o.listen, "listen", ":24785", "listen on `ADDR` (host:port) for the clients' handshake")
	f.IntVar(&o.conv, "conv", 0, "take player P from conversation `N` (as pmdump stats numbers them)")
	f.StringVar(&o.era, "era", "auto", eraHelp)
	f.Float64Var(&o.speed, "speed", 1, "speed multiplier `X` of the recorded timing")
	f.IntVar(&o.from, "from", -1, "start at game frame `FRAME`")
	f.IntVar(&o.slsn, "slsn", -1, "level sequence `K` of --from")
	f.BoolVar(&o.loop, "loop", false, "serve the recording again and again")
	f.BoolVar(&o.exit, "exit-when-done", false, "exit once every client that joined has been served the whole recording")
	return c
}

func runServe(cmd *cobra.Command, args []string, o *serveOpts) error {
	era, err := decode.ParseVersion(o.era)
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
		if pe := pickError(err); pe != err {
			return pe
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
	fmt.Fprintf(cmd.OutOrStdout(), "serving player %d (conversation %d, %s, %d-byte states): %d states, level sequence %d frame %d to %d frame %d, %.1f s at speed %g, on %s\n",
		rec.Player, rec.Conv, rec.Era.Label(), rec.Size, len(rec.States)-start, first.SLSN, first.Frame, last.SLSN, last.Frame,
		(last.At-first.At).Seconds()/o.speed, o.speed, ln.LocalAddr())
	if note := listenNote(ln.LocalAddr().(*net.UDPAddr)); note != "" {
		fmt.Fprintln(cmd.OutOrStdout(), note)
	}

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
		st, n := srv.Status(), srv.Counts()
		if term {
			fmt.Fprint(stderr, "\r\033[K", statusLine(st, n))
		} else if time.Since(lastLine) >= 5*time.Second && (len(st) > 0 || n != (serve.Counts{})) {
			fmt.Fprintln(stderr, statusLine(st, n))
			lastLine = time.Now()
		}
		if o.exit && allDone(st, n) {
			stop()
		}
	}
}

// listenNote says plainly when serve listens on every interface.
func listenNote(a *net.UDPAddr) string {
	if a.IP != nil && !a.IP.IsUnspecified() {
		return ""
	}
	return fmt.Sprintf("listening on all interfaces: any host that can reach this one can join; --listen 127.0.0.1:%d serves this machine only", a.Port)
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

// allDone reports whether serve has served every client it has: some
// client joined, and every client still there (joined, or with a handshake
// open that may yet join) has been served the whole recording.
func allDone(st []serve.ClientStatus, n serve.Counts) bool {
	if n.Joins == 0 {
		return false
	}
	for _, c := range st {
		if !c.Joined || !c.Done {
			return false
		}
	}
	return true
}

// statusLine shows each joined client: its endpoint, the last state sent,
// the newest it acknowledged and how far behind it is; then how many
// handshakes are open and what became of the clients no longer served.
func statusLine(st []serve.ClientStatus, n serve.Counts) string {
	var b strings.Builder
	joining := 0
	for _, c := range st {
		if !c.Joined {
			joining++
			continue
		}
		if b.Len() > 0 {
			b.WriteString(" | ")
		}
		fmt.Fprintf(&b, "%s p%d sent %d:%d", c.Client, c.Player, c.SentSLSN, c.SentAt)
		if c.AckFrame < 0 {
			b.WriteString(" no ack")
		} else {
			fmt.Fprintf(&b, " ack %d:%d", c.AckSLSN, c.AckFrame)
		}
		if c.Behind >= 0 {
			fmt.Fprintf(&b, " (%d behind)", c.Behind)
		}
		if c.Held > 0 {
			fmt.Fprintf(&b, ", %d held back", c.Held)
		}
		if c.Done {
			b.WriteString(" done")
		}
	}
	if b.Len() == 0 {
		b.WriteString("waiting for clients")
	}
	if joining > 0 {
		fmt.Fprintf(&b, " | %d joining", joining)
	}
	var gone []string
	for _, f := range []struct {
		n    int
		what string
	}{
		{n.Finished, "finished"}, {n.Dropped, "dropped"}, {n.Replaced, "replaced"}, {n.Refused, "refused (full)"},
		{n.TimedOut, "handshakes timed out"}, {n.Evicted, "evicted"}, {n.NoSocket, "not answered (no socket)"},
	} {
		if f.n > 0 {
			gone = append(gone, fmt.Sprintf("%d %s", f.n, f.what))
		}
	}
	if len(gone) > 0 {
		fmt.Fprintf(&b, " | gone: %s", strings.Join(gone, ", "))
	}
	return b.String()
}
