package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/gopacket/gopacket/layers"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/filter"
	"github.com/pmdump/pmdump/internal/timefmt"
	"github.com/pmdump/pmdump/packetfmt"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

type readOpts struct {
	verbose bool
	hexdump bool
	count   int
	filter  string
	json    bool
	era     string
	time    string
	files   []string
	write   string
	// precision of the time stamps -w writes: "micro", "nano", or ""
	// for the input's
	precision string
}

func newReadCmd() *cobra.Command {
	var o readOpts
	c := &cobra.Command{
		Use:   "read [flags] FILE...",
		Short: "Decode every game packet of one or more captures",
		Long: `Read prints one line per game packet: capture frame number, time, source →
destination, direction, player, packet name and its key fields. Packets that do
not fit their layout are shown as malformed with the reason; names no era knows
are shown as unknown with their bytes. UDP that is not game traffic is skipped
(pmdump stats counts it).

FILE is a pcap or pcapng file, optionally gzip-compressed; "-" reads a capture
stream from stdin; the bundled samples are
` + samplesHelp() + `.
Several files are read one after the other as one capture (frames numbered
on); a client that shakes hands again starts a new conversation.

` + filter.Help() + `
JSON output (--json) is one object per line with the keys
  num     frame number in the capture (num in filters too)
  ts      capture time, RFC 3339 with all nine digits of nanoseconds
  src,dst source and destination "ip:port"
  dir     "c2s" or "s2c"
  type    the 4-character packet name
  era     the conversation's version of the game: "legacy", "modern",
          "2026-07"… (see --era), or "unknown"
  client  the client endpoint of the conversation
  player  player number (when known)
  len     payload length in bytes
  fields  the decoded fields, snake_case (meant value; name_raw holds the raw
          value where the legacy encoding differs; data fields give name_len)
  error   why the packet is malformed or unknown (only then)
  raw     the payload in hex (malformed and unknown packets, or with -x)`,
		Example: `  pmdump read capture.pcap
  pmdump read -Y 'player == 2' -w player2.pcap capture.pcap
  pmdump read -V -c 5 capture.pcapng
  pmdump read -Y 'stdf and src == 0' capture.pcap
  pmdump read -Y 'player == 2 and c2s and frame in 1000..1200' capture.pcap
  pmdump read --json capture.pcap.gz | jq .fields
  tcpdump -U -i eth0 -w - udp | pmdump read -`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args = append(o.files, args...)
			if len(args) == 0 {
				return usagef("no capture to read: give FILE (or -r FILE, or - for stdin)")
			}
			return runRead(cmd, args, &o)
		},
	}
	f := c.Flags()
	o.addDisplayFlags(f, "see above")
	f.StringVarP(&o.write, "write", "w", "", "write the frames of the matching game packets, as captured, to capture `FILE` (pcap, or pcapng by extension; - is stdout) instead of printing them")
	f.StringVar(&o.precision, "time-stamp-precision", "", "time stamps -w writes to a pcap: `micro` or nano (default: the input's, as tcpdump and editcap keep it)")
	f.StringArrayVarP(&o.files, "read", "r", nil, "read `FILE` (as tcpdump -r; the same as giving FILE as an argument)")
	return c
}

// addDisplayFlags adds the flags that say how packets are shown (read
// and live share them); filterHelp says where the filter syntax is.
func (o *readOpts) addDisplayFlags(f *pflag.FlagSet, filterHelp string) {
	f.BoolVarP(&o.verbose, "verbose", "V", false, "print the full field tree of each packet")
	f.BoolVarP(&o.hexdump, "hex", "x", false, "add a hex dump of each packet's payload")
	f.IntVarP(&o.count, "count", "c", 0, "stop after `N` game packets (0: all)")
	f.StringVarP(&o.filter, "filter", "Y", "", "display filter `EXPR` ("+filterHelp+")")
	f.BoolVar(&o.json, "json", false, "one JSON object per line")
	f.StringVar(&o.era, "era", "auto", eraHelp)
	f.StringVarP(&o.time, "time", "t", "a", "time format: a (time of day, UTC), ad (date and time), r (seconds since the first packet), d (since the previous packet shown), e (epoch)")
}

// parse checks the display flags read and live share and returns the era
// and the compiled filter (nil without -Y).
func (o *readOpts) parse() (decode.Version, *filter.Filter, error) {
	era, err := decode.ParseVersion(o.era)
	if err != nil {
		return era, nil, usageError{err}
	}
	if o.count < 0 {
		return era, nil, usagef("-c must not be negative")
	}
	if _, err := timefmt.ParseFormat(o.time); err != nil {
		return era, nil, usageError{err}
	}
	if o.json && o.verbose {
		return era, nil, usagef("--json prints its own form of each packet: -V does not go with it")
	}
	var flt *filter.Filter
	if o.filter != "" {
		if flt, err = filter.Compile(o.filter); err != nil {
			return era, nil, usageError{err}
		}
	}
	return era, flt, nil
}

// readGCPercent is read's garbage collection target (GOGC).
const readGCPercent = 400

func runRead(cmd *cobra.Command, args []string, o *readOpts) error {
	if os.Getenv("GOGC") == "" {
		// read's heap is small and stays so (a few megabytes of batches
		// and tables): a collection at the default goal, early in every
		// run, scans gopacket's 5 MB of tables for nothing (7–10 % of
		// read's CPU on the 286k-packet file).
		defer debug.SetGCPercent(debug.SetGCPercent(readGCPercent))
	}
	if o.json && (o.verbose || o.write != "") {
		return usagef("--json prints its own form of each packet: -V and -w do not go with it")
	}
	era, flt, err := o.parse()
	if err != nil {
		return err
	}
	switch {
	case o.precision != "" && o.precision != "micro" && o.precision != "nano":
		return usagef("--time-stamp-precision %q: micro or nano", o.precision)
	case o.precision != "" && o.write == "":
		return usagef("--time-stamp-precision is for -w")
	}
	if o.write != "" {
		return writeMatching(cmd, args, era, flt, o)
	}
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
	defer out.Flush()
	stop := new(engine.Stopper)
	pp := &packetPrinter{pr: printer{o: o, out: out}, flt: flt, stop: stop}
	cfg := engine.Config{
		Era:      era,
		Stopper:  stop,
		Idle:     func() { out.Flush() }, // a live stream shows its packets as they come
		OnPacket: func(pe *engine.PacketEvent) { pp.handle(*pe) },
		Events:   engine.PacketEvents | engine.WarningEvents | engine.ProgressEvents,
	}
	e, err := drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, false)
	if e != nil {
		e.Close()
	}
	if pp.err != nil {
		return pp.err
	}
	if e != nil && pp.shown == 0 {
		noteNoMatch(cmd.ErrOrStderr(), flt)
	}
	if ferr := out.Flush(); ferr != nil && err == nil {
		err = ferr
	}
	if e != nil {
		// After the packets: why those of some conversation were not decoded.
		if note := engine.NoVersionNote(e.Conversations()); note != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "pmdump: note: %s\n", note)
		}
	}
	return err
}

// noteNoMatch says, when a filter matched no packet, which names it uses
// only some packets have.
func noteNoMatch(w io.Writer, flt *filter.Filter) {
	if flt == nil {
		return
	}
	if h := flt.Hint(); h != "" {
		fmt.Fprintf(w, "pmdump: note: no packet matched %q: %s\n", flt.String(), h)
	}
}

// packetPrinter prints the game packets an engine reports, as read does:
// those the filter matches, up to -c of them; it stops the engine at the
// count or when the output fails (err).
type packetPrinter struct {
	pr    printer
	flt   *filter.Filter
	stop  *engine.Stopper
	shown int
	err   error
}

func (pp *packetPrinter) handle(pe engine.PacketEvent) {
	if pp.err != nil {
		return
	}
	r := pe.Record
	if pp.flt != nil && !pp.flt.Match(r) {
		return
	}
	if pp.pr.line.T0.IsZero() {
		pp.pr.line.T0, pp.pr.line.Digits = pe.First, max(pe.Digits, 6)
	}
	if err := pp.pr.print(r); err != nil {
		pp.err = err
		pp.stop.Stop()
		return
	}
	pp.shown++
	if pp.pr.o.count > 0 && pp.shown >= pp.pr.o.count {
		pp.stop.Stop()
	}
}

// writeMatching is read -w: the frames of the matching game packets go to a
// capture file (or standard output for "-") as they were captured: their
// link layer, addresses, time stamps and interfaces (a pcapng keeps each
// interface; a pcap holds one link type, that of the first packet).
func writeMatching(cmd *cobra.Command, args []string, era decode.Version, flt *filter.Filter, o *readOpts) error {
	var dst io.Writer = cmd.OutOrStdout() // -w -: standard output, as tcpdump
	var f *os.File
	if o.write != "-" {
		var err error
		if f, err = os.Create(o.write); err != nil {
			return usagef("-w: %v", err)
		}
		dst = f
	}
	format := source.FormatFor(o.write)
	micro := o.precision == "micro"
	var w *source.CaptureWriter
	open := func(intf source.Interface) error {
		var err error
		w, err = source.NewCaptureWriter(dst, source.WriterOptions{Format: format, Interfaces: []source.Interface{intf}, Micro: micro})
		return err
	}
	written, skipped := 0, 0
	var writeErr error
	stop := new(engine.Stopper)
	cfg := engine.Config{Era: era, Stopper: stop, OnEvent: func(ev engine.Event) {
		pe, ok := ev.(engine.PacketEvent)
		if !ok || writeErr != nil {
			return
		}
		r, d := pe.Record, pe.Datagram
		if flt != nil && !flt.Match(r) {
			return
		}
		if w == nil {
			if o.precision == "" {
				micro = d.Digits <= 6 // the input's precision, as tcpdump and editcap keep it
			}
			if writeErr = open(source.Interface{Name: d.InterfaceName, LinkType: d.LinkType}); writeErr != nil {
				stop.Stop()
				return
			}
		}
		if err := w.WriteDatagram(d); errors.Is(err, source.ErrLinkType) {
			skipped++
			return
		} else if err != nil {
			writeErr = err
			stop.Stop()
			return
		}
		written++
		if o.count > 0 && written >= o.count {
			stop.Stop()
		}
	}}
	e, err := drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, false)
	if e != nil {
		e.Close()
	}
	if writeErr != nil {
		err = writeErr
	}
	if e != nil && written == 0 {
		noteNoMatch(cmd.ErrOrStderr(), flt)
	}
	if w == nil && writeErr == nil { // nothing matched: an empty capture
		if cerr := open(source.Interface{LinkType: layers.LinkTypeEthernet}); cerr != nil && err == nil {
			err = cerr
		}
	}
	if w != nil {
		if cerr := w.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	if f != nil {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%d packets written to %s\n", written, o.write)
	if skipped > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "pmdump: %d packets of another link type not written: a pcap holds one link type (write a .pcapng)\n", skipped)
	}
	return err
}

// printer formats records as text lines, field trees or JSON.
type printer struct {
	o    *readOpts
	out  *bufio.Writer
	line packetfmt.Line
}

func (pr *printer) print(r *session.Record) error {
	// The record is formatted straight into the writer's buffer: most
	// lines fit in what is left of it, and Write then has nothing to copy
	// but the line onto itself.
	if pr.out.Available() < 512 {
		if err := pr.out.Flush(); err != nil {
			return err
		}
	}
	b := pr.out.AvailableBuffer()
	if pr.o.json {
		b = appendJSON(b, r, pr.o.hexdump)
	} else {
		if pr.line.Time == "" {
			pr.line.Time = pr.o.time
		}
		b = pr.line.Append(b, r)
		if pr.o.verbose {
			b = packetfmt.AppendTreeHeader(b, r)
			b = r.Packet.AppendTree(b, "    ")
		}
		if pr.o.hexdump {
			b = packetfmt.AppendHex(b, r.Packet.Raw)
		}
	}
	_, err := pr.out.Write(b)
	return err
}

// appendJSON appends one record as a JSON line with the documented keys.
func appendJSON(b []byte, r *session.Record, withRaw bool) []byte {
	o := openJSON(b)
	o.int("num", int64(r.N))
	o.time("ts", r.TS)
	o.addr("src", r.Src)
	o.addr("dst", r.Dst)
	o.name("dir", r.Dir.String())
	o.str("type", string(r.Packet.Name[:]))
	o.name("era", r.Version.String())
	if r.Client.IsValid() {
		o.addr("client", r.Client)
	}
	if r.Player >= 0 {
		o.int("player", int64(r.Player))
	}
	o.int("len", int64(len(r.Packet.Raw)))
	o.key("fields")
	o.b = r.Packet.AppendJSONFields(o.b)
	if r.Packet.Err != nil {
		o.str("error", r.Packet.Err.Error())
	}
	if withRaw || r.Kind != session.Game {
		o.hex("raw", r.Packet.Raw)
	}
	return append(o.close(), '\n')
}

// samplesHelp names the bundled samples for help texts: "sample:legacy,
// sample:modern, sample:2026-07 (also sample:newest)".
func samplesHelp() string {
	names := make([]string, len(captures.Names))
	for i, n := range captures.Names {
		names[i] = "sample:" + n
	}
	return strings.Join(names, ", ") + " (also sample:" + captures.Newest + ")"
}
