package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/source"
)

// liveFlags are the flags of a live capture.
type liveFlags struct {
	ifaces   []string
	promisc  bool
	ports    []uint
	ringMiB  int
	duration time.Duration
	write    string // every captured frame to this capture file
}

func (l *liveFlags) add(f *pflag.FlagSet, withWrite bool) {
	f.StringArrayVarP(&l.ifaces, "interface", "i", nil, "capture live on network interface `IFACE` (repeatable; any: every interface)")
	f.BoolVar(&l.promisc, "promisc", false, "live: promiscuous mode (also frames not addressed to this host)")
	f.UintSliceVar(&l.ports, "port", nil, "live: capture only UDP from or to these `PORTS` (comma-separated; all UDP without it)")
	f.Lookup("port").DefValue = "" // no "(default [])" in the help
	f.IntVar(&l.ringMiB, "ring", 32, "live: kernel ring buffer per interface, in `MiB`")
	f.DurationVar(&l.duration, "duration", 0, "live: stop after `D` (e.g. 30s, 10m)")
	if withWrite {
		f.StringVarP(&l.write, "write", "w", "", "also write every captured frame to capture `FILE` (pcap, or pcapng by extension; - is stdout)")
	}
}

func (l *liveFlags) live() bool { return len(l.ifaces) > 0 }

// check refuses live flags without -i.
func (l *liveFlags) check(cmd *cobra.Command) error {
	if l.live() {
		if l.ringMiB < 1 || l.ringMiB > 4096 {
			return usagef("--ring %d: want 1 to 4096 MiB", l.ringMiB)
		}
		for _, p := range l.ports {
			if p == 0 || p > 65535 {
				return usagef("--port %d is not a UDP port", p)
			}
		}
		return nil
	}
	for _, name := range []string{"promisc", "port", "ring", "duration"} {
		if cmd.Flags().Changed(name) {
			return usagef("--%s is for a live capture: give -i IFACE", name)
		}
	}
	return nil
}

// inputs checks the live flags against the capture files given (the
// arguments and -r): one or the other, not both, and at least one.
func (l *liveFlags) inputs(cmd *cobra.Command, files []string) ([]string, error) {
	if err := l.check(cmd); err != nil {
		return nil, err
	}
	if l.live() && len(files) > 0 {
		return nil, usagef("give captures to read or -i IFACE to capture live, not both")
	}
	if len(files) == 0 && !l.live() {
		return nil, usagef("no capture to read: give FILE (or -r FILE, or - for stdin, or -i IFACE to capture live)")
	}
	return files, nil
}

// open opens the live capture the flags describe; its errors are input
// errors (exit status 2) that say what to do.
func (l *liveFlags) open() (*source.LiveSource, error) {
	ports := make([]uint16, len(l.ports))
	for i, p := range l.ports {
		ports[i] = uint16(p)
	}
	live, err := source.OpenLive(source.LiveOptions{Interfaces: l.ifaces, Promiscuous: l.promisc, Ports: ports, RingSize: l.ringMiB << 20})
	if err != nil {
		return nil, inputError{err}
	}
	if err := live.CapabilitiesKept(); err != nil {
		fmt.Fprintln(os.Stderr, "pmdump: warning:", err)
	}
	return live, nil
}

// liveRun is what a live capture saw, for its summary.
type liveRun struct {
	ifaces            []string
	received, dropped uint64
	counters          source.Counters
	written           int
	writeFile         string
}

// driveLive runs an engine on a live capture until Ctrl-C or SIGTERM,
// --duration, or the engine is stopped (-c): it ticks the engine while the
// network is quiet, calls cfg.Idle when nothing is waiting so output shows
// at once, and writes every frame to --write. Events reach cfg.OnEvent one
// at a time. Errors opening the capture are input errors (exit status 2).
func driveLive(ctx context.Context, stderr io.Writer, cfg engine.Config, l *liveFlags) (*engine.Engine, *liveRun, error) {
	live, err := l.open()
	if err != nil {
		return nil, nil, err
	}
	run := &liveRun{ifaces: l.ifaces, writeFile: l.write}
	var frames source.FrameSource = live
	var w *source.CaptureWriter
	if l.write != "" {
		w, err = source.CreateCapture(l.write, source.WriterOptions{
			Format:        source.FormatFor(l.write),
			Interfaces:    live.Interfaces(),
			FlushInterval: 50 * time.Millisecond, // valid up to the last 50 ms if pmdump is killed
		})
		if err != nil {
			live.Close()
			if errors.Is(err, source.ErrLinkType) {
				return nil, nil, usagef("-w %s: %v", l.write, err)
			}
			return nil, nil, usagef("-w: %v", err)
		}
		frames = source.Tee(live, w)
	}
	fmt.Fprintf(stderr, "pmdump: capturing on %s (Ctrl-C to stop)\n", strings.Join(l.ifaces, ", "))

	// One event at a time: the engine emits from the goroutine that feeds
	// it and from the one that ticks it.
	var mu sync.Mutex
	next, idle := cfg.OnEvent, cfg.Idle
	cfg.OnEvent = func(ev engine.Event) {
		mu.Lock()
		defer mu.Unlock()
		if we, ok := ev.(engine.WarningEvent); ok {
			fmt.Fprintln(stderr, "pmdump: warning:", we.Message)
		}
		if next != nil {
			next(ev)
		}
	}
	cfg.Idle = nil
	e := engine.New(cfg)

	stop := func() { live.Close() } // the reader drains what was captured, then ends
	sig, cancel := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer cancel()
	go func() {
		<-sig.Done()
		cancel() // a second Ctrl-C ends pmdump at once
		stop()
	}()
	if l.duration > 0 {
		t := time.AfterFunc(l.duration, stop)
		defer t.Stop()
	}
	afterTick := func() {
		if idle != nil {
			mu.Lock()
			idle()
			mu.Unlock()
		}
	}
	pf := source.Prefetch(source.NewFrameReader(frames, "live"))
	pf.Idle = afterTick
	runErr := e.RunLive(context.Background(), pf, 250*time.Millisecond, afterTick)
	stop() // -c or a failing output stopped the engine
	pf.Close()
	run.counters = pf.Counters()
	run.received, run.dropped, _ = live.KernelStats()
	if w != nil {
		run.written = w.Frames()
		if err := w.Close(); err != nil && runErr == nil {
			runErr = err
		}
	}
	return e, run, runErr
}

// summary prints what the kernel counted and what was written (the
// reader's warnings came as the engine's).
func (r *liveRun) summary(w io.Writer) {
	fmt.Fprintf(w, "pmdump: %d frames captured on %s; the kernel received %d, dropped %d",
		r.counters.Frames, strings.Join(r.ifaces, ", "), r.received, r.dropped)
	if late := int64(r.received) - int64(r.dropped) - int64(r.counters.Frames); late > 0 {
		// The sockets stay open while the capture ends (-c, Ctrl-C,
		// --duration): what came then was received, not read.
		fmt.Fprintf(w, "; %d came as the capture ended and were not read", late)
	}
	fmt.Fprintln(w)
	if r.writeFile != "" {
		fmt.Fprintf(w, "pmdump: %d frames written to %s\n", r.written, r.writeFile)
	}
}

type liveOpts struct {
	readOpts
	liveFlags
	states bool
}

func newLiveCmd() *cobra.Command {
	var o liveOpts
	c := &cobra.Command{
		Use:   "live -i IFACE [flags]",
		Short: "Capture a running game from a network interface and decode it as it happens",
		Long: `Live captures the game's UDP traffic from network interfaces (Linux, no
libpcap) and prints every game packet as read does, as it arrives; --states
also prints each game state as it is rebuilt (as pmdump states does). -w FILE
also writes every captured frame to a capture file (pcap, or pcapng by
extension; - is standard output, and then nothing else is printed there),
flushed as it goes, so the file is valid even if pmdump is killed.

It stops on Ctrl-C (or SIGTERM), after --duration or after -c packets, then
prints the summary of pmdump stats and the kernel's received and dropped
counts on stderr.

-i any captures on every interface (frames without their link-layer header).
On the loopback device each packet is captured once (the kernel shows it
twice, as sent and as received). A kernel filter passes only UDP (and IPv4
fragments), or with --port only given ports, so other traffic costs nothing.
The game's server answers each client from a port of its own, and a client
on the server's host sends from any port: --port 24785 then sees only the
handshakes, so give it where the clients use the game's port (a LAN) or
leave it out.

Live capture needs root or the CAP_NET_RAW capability (--promisc included),
which pmdump drops once its capture sockets are open. To let a group of
trusted users capture, grant it to a binary only they may run, as
Wireshark's dumpcap is installed (build it with CGO_ENABLED=0, so that it
can drop the capability from every thread):
  sudo groupadd -f pmdump && sudo usermod -aG pmdump $USER
  sudo chgrp pmdump $(which pmdump) && sudo chmod 750 $(which pmdump)
  sudo setcap cap_net_raw=ep $(which pmdump)`,
		Example: `  sudo pmdump live -i eth0
  pmdump live -i eth0 -Y 'player == 2' --states
  pmdump live -i eth0 -w game.pcapng --duration 10m
  pmdump live -i eth0 --port 24785 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLive(cmd, &o) },
	}
	f := c.Flags()
	o.readOpts.addDisplayFlags(f, "see pmdump read --help")
	f.BoolVar(&o.states, "states", false, "also print each state as it is rebuilt")
	o.liveFlags.add(f, true)
	return c
}

func runLive(cmd *cobra.Command, o *liveOpts) error {
	if !o.live() {
		return usagef("no interface to capture on: give -i IFACE (pmdump live -i any captures on every interface)")
	}
	if err := o.liveFlags.check(cmd); err != nil {
		return err
	}
	era, flt, err := o.readOpts.parse()
	if err != nil {
		return err
	}
	var stdout io.Writer = cmd.OutOrStdout()
	quiet := o.liveFlags.write == "-" // the capture goes to stdout: print nothing there
	if quiet {
		stdout = io.Discard
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	defer out.Flush()
	stop := new(engine.Stopper)
	pp := &packetPrinter{pr: printer{o: &o.readOpts, out: out}, flt: flt, stop: stop}
	cfg := engine.Config{Era: era, Work: engine.Counts, Idle: func() { out.Flush() }, Stopper: stop}
	if o.states {
		cfg.Work |= engine.States
		cfg.SHA256 = true // printed with each state
	}
	var buf []byte
	cfg.OnEvent = func(ev engine.Event) {
		switch ev := ev.(type) {
		case engine.PacketEvent:
			if !quiet {
				pp.handle(ev)
			}
		case engine.StateEvent:
			if o.states && !quiet {
				if o.json {
					buf = appendStateJSON(buf[:0], ev.State)
				} else {
					buf = appendStateLine(buf[:0], ev.State)
				}
				out.Write(buf)
			}
		}
	}
	e, run, err := driveLive(cmd.Context(), cmd.ErrOrStderr(), cfg, &o.liveFlags)
	if e == nil {
		return err
	}
	defer e.Close()
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if pp.err != nil && err == nil {
		err = pp.err
	}
	rep := e.Stats()
	rep.Inputs = []string{"live: " + strings.Join(o.ifaces, ", ")}
	writeReport(cmd.ErrOrStderr(), rep)
	run.summary(cmd.ErrOrStderr())
	return err
}
