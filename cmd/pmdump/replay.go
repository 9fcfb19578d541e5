package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/filter"
	"github.com/pmdump/pmdump/sender"
)

type replayOpts struct {
	to     string
	filter string
	conv   int
	dir    string
	era    string
	speed  float64
	pps    float64
	asap   bool
	loop   int
	count  int
}

func newReplayCmd() *cobra.Command {
	var o replayOpts
	c := &cobra.Command{
		Use:   "replay FILE… --to HOST:PORT",
		Short: "Send the game packets of captures again, as UDP datagrams, with their timing",
		Long: `replay sends the game payloads of the captures (all of them, or those that match
-Y, --conv and --dir) again as UDP datagrams, in capture order and with the
original timing: --speed X divides the gaps, --pps N sends N datagrams a
second, --asap sends as fast as the sockets take them; -c N stops after N
datagrams. The captures are read as they are sent, so memory stays small
whatever their length (--loop reads them again).

Every recorded conversation keeps its roles, as tcpreplay-edit's endpoint
rewriting does, with HOST:PORT (--to) as the server's listening address:

  - each client is a socket of its own on this machine; its handshake (1234)
    goes to HOST:PORT, its other datagrams to the conversation's server port;
  - when HOST is an address of this machine, each conversation also gets a
    server socket on HOST with a port of its own (the game's server answers
    each client from a new port): it sends the server's datagrams (s→c) to
    the client's socket and receives the client's. A capture on HOST (for
    example pmdump live -i lo for 127.0.0.1) shows every conversation apart,
    both directions, as recorded;
  - otherwise the server's datagrams cannot be sent (they would have to come
    from HOST) and are skipped and counted; the client's datagrams after the
    handshake go to the port the server at HOST answered from. With --dir c2s
    the clients are played to a real server (a game server, pmdump serve) in
    the same way, also on this machine.

Every datagram's send time is anchored to the start of the replay (time since
the first packet ÷ speed), never to the previous send, so errors do not add up
over a long replay: the sender sleeps until shortly before each deadline and
spins for the rest.

Errors the network reports (ICMP port unreachable, host or network
unreachable) are counted from each socket's error queue, in every mode, and
the replay goes on. On a terminal a bar shows how far the capture has been
read; at the end a summary gives the datagrams and bytes sent, the achieved
rate and the send-time error (actual − due) p50, p99 and max.`,
		Example: `  pmdump replay game.pcap --to 127.0.0.1:24785
  pmdump replay game.pcap --to 10.0.0.5:24785 --dir c2s --conv 2 --speed 4
  pmdump replay game.pcap --to 127.0.0.1:9000 -Y 'cdat and player == 1' --asap --loop 10 -c 100000`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReplay(cmd, args, &o) },
	}
	f := c.Flags()
	f.StringVar(&o.to, "to", "", "the server's listening address `HOST:PORT` (required)")
	f.StringVarP(&o.filter, "filter", "Y", "", "send only the packets matching display filter `EXPR` (see pmdump read --help)")
	f.IntVar(&o.conv, "conv", 0, "send only conversation `N` (as pmdump stats numbers them)")
	f.StringVar(&o.dir, "dir", "", "send only one direction: c2s or s2c")
	f.StringVar(&o.era, "era", "auto", eraHelp)
	f.Float64Var(&o.speed, "speed", 1, "speed multiplier `X` of the original timing")
	f.Float64Var(&o.pps, "pps", 0, "send `N` datagrams per second instead of the original timing")
	f.BoolVar(&o.asap, "asap", false, "send as fast as possible")
	f.IntVar(&o.loop, "loop", 1, "send the packets `N` times (0: until interrupted)")
	f.IntVarP(&o.count, "count", "c", 0, "stop after `N` datagrams")
	return c
}

func runReplay(cmd *cobra.Command, args []string, o *replayOpts) error {
	if o.to == "" {
		return usagef("--to HOST:PORT is required")
	}
	era, err := decode.ParseVersion(o.era)
	if err != nil {
		return usageError{err}
	}
	timings := 0
	if cmd.Flags().Changed("speed") {
		timings++
	}
	if o.pps != 0 {
		timings++
	}
	if o.asap {
		timings++
	}
	switch {
	case timings > 1:
		return usagef("give only one of --speed, --pps and --asap")
	case o.speed <= 0:
		return usagef("--speed must be positive")
	case o.pps < 0:
		return usagef("--pps must be positive")
	case o.loop < 0:
		return usagef("--loop must not be negative")
	case o.conv < 0:
		return usagef("--conv must be positive")
	case o.count < 0:
		return usagef("-c must not be negative")
	}
	var dir decode.Dir
	switch o.dir {
	case "":
	case "c2s":
		dir = decode.C2S
	case "s2c":
		dir = decode.S2C
	default:
		return usagef("--dir must be c2s or s2c, not %q", o.dir)
	}
	var flt *filter.Filter
	if o.filter != "" {
		if flt, err = filter.Compile(o.filter); err != nil {
			return usageError{err}
		}
	}
	raddr, err := net.ResolveUDPAddr("udp", o.to)
	if err != nil {
		return usagef("--to: %v", err)
	}
	fleet, err := sender.NewFleet(raddr, dir != decode.C2S)
	if err != nil {
		return usagef("--to: %v", err)
	}
	defer fleet.Close()

	// One pass reads the captures and hands each selected datagram to the
	// sender as it is decoded; nothing of the capture is kept.
	stderr := cmd.ErrOrStderr()
	passes, selected := 0, 0
	pass := func(ctx context.Context, yield func(sender.Datagram) bool) error {
		passes++
		stopper := &engine.Stopper{}
		var first, last time.Time
		warn := stderr
		if passes > 1 {
			warn = io.Discard // said on the first pass
		}
		cfg := engine.Config{Era: era, OnEvent: func(ev engine.Event) {
			pe, ok := ev.(engine.PacketEvent)
			if !ok || stopper.Stopped() {
				return
			}
			r := pe.Record
			if o.conv != 0 && (r.Conv == nil || r.Conv.ID != o.conv) || dir != 0 && r.Dir != dir || flt != nil && !flt.Match(r) {
				return
			}
			if first.IsZero() {
				first, last = r.TS, r.TS
			}
			if r.TS.After(last) {
				last = r.TS // never back in time: capture order is kept
			}
			d := sender.Datagram{Offset: last.Sub(first), Payload: r.Packet.Raw, Server: r.Dir == decode.S2C}
			if r.Conv != nil {
				d.Conv = r.Conv.ID
				d.Listen = !d.Server && r.Conv.Listen.IsValid() && r.Dst == r.Conv.Listen
			}
			selected++
			if !yield(d) {
				stopper.Stop()
			}
		}, Stopper: stopper}
		eng, err := drive(ctx, warn, cfg, args, passes == 1)
		if eng != nil {
			eng.Close()
		}
		return err
	}

	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
	defer stop()
	opt := sender.Options{Speed: o.speed, PPS: o.pps, ASAP: o.asap, Loop: o.loop, Forever: o.loop == 0, Limit: o.count}
	st, err := sender.Run(ctx, fleet, pass, opt)
	if err != nil {
		return err
	}
	if selected == 0 {
		return usagef("no game packet to send (check -Y, --conv and --dir)")
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "sent %d datagrams, %d bytes to %s in %.3f s: %.0f datagrams/s, %.2f Mbit/s\n",
		st.Datagrams, st.Bytes, raddr, st.Elapsed.Seconds(), st.Rate(), float64(st.Bytes)*8/1e6/max(st.Elapsed.Seconds(), 1e-9))
	where := "the server's datagrams skipped"
	switch {
	case dir == decode.C2S:
		where = "the server's port learned from its answers"
	case fleet.Local():
		where = "each with a server socket on " + raddr.IP.String()
	}
	fmt.Fprintf(w, "conversations: %d, each from its own socket; %s\n", st.Convs, where)
	if st.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d s→c datagrams: %s is not an address of this machine, so they cannot come from the server (--dir c2s plays the clients only)\n", st.Skipped, raddr.IP)
	}
	if len(st.Errors) > 0 {
		fmt.Fprintf(w, "send-time error: p50 %v, p99 %v, max %v\n", roundDur(st.Quantile(0.5)), roundDur(st.Quantile(0.99)), roundDur(st.Max()))
	}
	if st.Failed() > 0 {
		fmt.Fprintf(w, "network errors: %d refused (port unreachable), %d no route, %d other; last: %v\n", st.Refused, st.NoRoute, st.Other, st.LastErr)
	}
	return nil
}

// roundDur rounds a duration for the summary: µs resolution, 10 ns below
// 10 µs.
func roundDur(d time.Duration) time.Duration {
	if d < 10*time.Microsecond {
		return d.Round(10 * time.Nanosecond)
	}
	return d.Round(time.Microsecond)
}
