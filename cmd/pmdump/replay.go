package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

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
}

func newReplayCmd() *cobra.Command {
	var o replayOpts
	c := &cobra.Command{
		Use:   "replay FILE… --to HOST:PORT",
		Short: "Send the game packets of captures again, as UDP datagrams, with their timing",
		Long: `replay sends the game payloads of the captures (all of them, or those that match
-Y, --conv and --dir) as UDP datagrams to one address, in capture order and with
the original timing: --speed X divides the gaps, --pps N sends N datagrams a
second, --asap sends as fast as the socket takes them.

Every datagram's send time is anchored to the start of the replay (time since
the first packet ÷ speed), never to the previous send, so errors do not add up
over a long replay: the sender sleeps until shortly before each deadline and
spins for the rest.

Errors the network reports (ICMP port unreachable, no route) are counted and the
replay goes on. A progress bar shows on a terminal; at the end a summary gives
the datagrams and bytes sent, the achieved rate and the send-time error
(actual − due) p50, p99 and max.`,
		Example: `  pmdump replay game.pcap --to 127.0.0.1:24785
  pmdump replay game.pcap --to 10.0.0.5:9000 --dir s2c --conv 2 --speed 4
  pmdump replay game.pcap --to 127.0.0.1:9000 -Y 'cdat and player == 1' --asap --loop 10`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runReplay(cmd, args, &o) },
	}
	f := c.Flags()
	f.StringVar(&o.to, "to", "", "send to `HOST:PORT` (required)")
	f.StringVarP(&o.filter, "filter", "Y", "", "send only the packets matching display filter `EXPR` (see pmdump read --help)")
	f.IntVar(&o.conv, "conv", 0, "send only conversation `N` (as pmdump stats numbers them)")
	f.StringVar(&o.dir, "dir", "", "send only one direction: c2s or s2c")
	f.StringVar(&o.era, "era", "auto", "protocol era: auto, legacy or modern")
	f.Float64Var(&o.speed, "speed", 1, "speed multiplier `X` of the original timing")
	f.Float64Var(&o.pps, "pps", 0, "send `N` datagrams per second instead of the original timing")
	f.BoolVar(&o.asap, "asap", false, "send as fast as possible")
	f.IntVar(&o.loop, "loop", 1, "send the packets `N` times (0: until interrupted)")
	return c
}

func runReplay(cmd *cobra.Command, args []string, o *replayOpts) error {
	if o.to == "" {
		return usagef("--to HOST:PORT is required")
	}
	era, err := decode.ParseEra(o.era)
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

	// The datagrams to send, with their times since the first one.
	var ds []sender.Datagram
	var first, last time.Time
	cfg := engine.Config{Era: era, OnEvent: func(ev engine.Event) {
		pe, ok := ev.(engine.PacketEvent)
		if !ok {
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
		ds = append(ds, sender.Datagram{Offset: last.Sub(first), Payload: bytes.Clone(r.Packet.Raw)})
	}}
	e, err := drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, false)
	if e != nil {
		e.Close()
	}
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return usagef("no game packet to send (check -Y, --conv and --dir)")
	}

	conn, err := net.DialUDP("udp", nil, raddr)
	if err != nil {
		return fmt.Errorf("--to %s: %w", o.to, err)
	}
	defer conn.Close()
	conn.SetWriteBuffer(4 << 20)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opt := sender.Options{Speed: o.speed, PPS: o.pps, ASAP: o.asap, Loop: o.loop, Forever: o.loop == 0}
	total := len(ds) * max(o.loop, 1) // one loop at a time when looping forever
	bar, wait := progressBar(cmd.ErrOrStderr(), total)
	if bar != nil {
		opt.Progress = func(n int) {
			if n&31 == 0 || n%total == 0 {
				bar.SetCurrent(int64((n-1)%total + 1))
			}
		}
	}
	st, err := sender.Send(ctx, conn, ds, opt)
	if bar != nil {
		bar.Abort(false)
		wait()
	}
	if err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "sent %d datagrams, %d bytes to %s in %.3f s: %.0f datagrams/s, %.2f Mbit/s\n",
		st.Datagrams, st.Bytes, raddr, st.Elapsed.Seconds(), st.Rate(), float64(st.Bytes)*8/1e6/max(st.Elapsed.Seconds(), 1e-9))
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

// progressBar returns a progress bar on w when w is a terminal (nil
// otherwise) and a function that waits for it to finish drawing.
func progressBar(w io.Writer, total int) (*mpb.Bar, func()) {
	if !isTerminal(w) {
		return nil, nil
	}
	pr := mpb.New(mpb.WithOutput(w), mpb.WithRefreshRate(200*time.Millisecond))
	bar := pr.AddBar(int64(total),
		mpb.PrependDecorators(decor.Name("replay "), decor.CountersNoUnit("%d / %d")),
		mpb.AppendDecorators(decor.Percentage(), decor.Name(" "), decor.AverageSpeed(0, "%.0f/s")),
	)
	return bar, pr.Wait
}
