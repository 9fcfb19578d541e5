package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/tui"
)

type tuiOpts struct {
	era    string
	schema string
	keep   string
	liveFlags
}

// defaultLiveKeep is what tui -i keeps of a live capture by default.
const defaultLiveKeep = "1GiB"

func newTUICmd() *cobra.Command {
	var o tuiOpts
	c := &cobra.Command{
		Use:   "tui [flags] FILE...",
		Short: "Explore captures in a terminal UI: packets, timeline, state and level map, diffs, health, findings",
		Long: `Tui opens captures in a full-screen terminal UI with six views:

  1 Packets   every game packet, a display filter (/, the -Y expressions of
              pmdump read), the field tree and hex dump of the selected one,
              jumps, marks, following one conversation
  2 Timeline  each client's rebuilt states: a scrubber (state by state, by
              second, keyframe, incomplete dif or base reset, frame) with
              sparklines of the whole game
  3 State     the state at the current frame in the game's terms beside a
              map of the level
  4 Diff      what changed from a marked state A to B, or between every
              client at one frame, with the changed blocks on the map
  5 Health    per-second charts of each conversation's netgame health
  6 Findings  what went wrong (pmdump doctor's findings), the worst first;
              enter goes to a finding's first packet and its state

The first screen shows at once; the capture is read in the background with
a progress bar, and the whole packet list, G and filters work once it is
read. The states are rebuilt behind it on every core, the client under the
cursor first, and show as they come; what is not rebuilt yet says so. "-"
reads a capture piped to standard input (the keyboard is then read from the
terminal). Press ? for every key. NO_COLOR turns colors off.

With -i the capture is live: the views update as packets come (the states
of the last difs show while the network is quiet), the newest packets are
kept in memory as a ring (--keep), and w writes what it holds. The capture
runs until ctrl+e ends it (the views stay), you quit, or for --duration; the
findings that need every state (late inputs counted in the states, the level
a change leads to, players leaving or dropped) come when it ends.`,
		Example: `  pmdump tui capture.pcap
  pmdump tui sample:modern
  pmdump tui --era legacy old.pcapng
  ssh host tcpdump -U -w - udp | pmdump tui -   # a capture piped in; keys from the terminal
  sudo pmdump tui -i eth0            # a live game: the views update as packets come`,
		RunE: func(cmd *cobra.Command, args []string) error { return runTUI(cmd, args, &o) },
	}
	f := c.Flags()
	f.StringVar(&o.era, "era", "auto", eraHelp)
	f.StringVar(&o.schema, "schema", "", "state layout `FILE` (JSON) for a state size the built-in schemas do not know")
	f.StringVar(&o.keep, "keep", "", "keep only the newest packets, as a ring: `N` packets or a size (500MiB, 2GB); live default "+defaultLiveKeep+", files keep all")
	o.liveFlags.add(f, false)
	return c
}

func runTUI(cmd *cobra.Command, args []string, o *tuiOpts) error {
	era, err := decode.ParseVersion(o.era)
	if err != nil {
		return usageError{err}
	}
	user, err := loadSchema(o.schema)
	if err != nil {
		return err
	}
	if err := o.liveFlags.check(cmd); err != nil {
		return err
	}
	if o.live() != (len(args) == 0) {
		return usagef("give capture files or -i IFACE (one of them)")
	}
	if err := checkTUIInputs(args, isTerminal(os.Stdin)); err != nil {
		return err
	}
	keep := o.keep
	if keep == "" && o.live() {
		keep = defaultLiveKeep
	}
	limit, err := parseKeep(keep)
	if err != nil {
		return usagef("--keep: %v", err)
	}
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(tuiMemoryLimit(limit, o.live())))
	opts := tui.Options{
		// Half the engine's default memory budget: what spills past it is
		// read back from page-cached temporary files, and the heap of a
		// one-hour game then stays under the soft limit (221 MB at most
		// after a collection against 247 MB; 237 MB peak RSS against 266).
		Config: engine.Config{Era: era, Schema: user, IndexLimit: limit, MemoryBudget: tuiMemoryBudget},
		Start:  fileStarter(args),
		Title:  strings.TrimSpace(strings.ReplaceAll(" "+strings.Join(args, " ")+" ", " - ", " stdin ")),
		Color:  os.Getenv("NO_COLOR") == "",
		Schema: user,
	}
	if o.live() {
		live, err := o.liveFlags.open()
		if err != nil {
			return err
		}
		defer live.Close()
		opts.Start, opts.Title = liveStarter(live, o.duration), "live: "+strings.Join(o.ifaces, ", ")
		opts.Live = strings.Join(o.ifaces, ", ")
	}
	if err := tui.Run(cmd.Context(), opts); err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// checkTUIInputs checks the capture arguments of tui: files that exist and
// are captures, samples, and at most one "-", a capture piped to standard input (the
// keyboard is then read from the terminal, as termshark does), which must
// not be the terminal itself.
func checkTUIInputs(args []string, stdinTerminal bool) error {
	stdin := 0
	for _, a := range args {
		switch {
		case a == "-":
			if stdin++; stdin > 1 {
				return usagef("- (standard input) can be read once")
			}
			if stdinTerminal {
				return usagef("- reads a capture piped to standard input, which is the terminal here: tcpdump -U -w - … | pmdump tui -")
			}
		case strings.HasPrefix(a, "sample:"):
		default:
			if _, err := os.Stat(a); err != nil {
				return inputError{err}
			}
			// Not a capture (a text file, garbage): the same error as
			// every other command's, before the UI takes the terminal.
			r, err := source.Open(a)
			if err != nil {
				return inputError{fmt.Errorf("cannot read %s: %w", a, err)}
			}
			r.Close()
		}
	}
	return nil
}

// liveStarter is the TUI's input for a live capture: it feeds the engine
// what the interfaces capture, ticks it while the network is quiet (so the
// last states show), and ends when the TUI quits or after duration (when
// above 0): the analysis is then finished, as at the end of a file.
func liveStarter(live *source.LiveSource, duration time.Duration) func(ctx context.Context, e *engine.Engine) error {
	return func(ctx context.Context, e *engine.Engine) error {
		go func() {
			<-ctx.Done()
			live.Close() // the reader drains what was captured, then ends
		}()
		if duration > 0 {
			t := time.AfterFunc(duration, func() { live.Close() })
			defer t.Stop()
		}
		pf := source.Prefetch(source.NewFrameReader(live, "live"))
		defer pf.Close()
		return e.RunLive(context.Background(), pf, 250*time.Millisecond, nil)
	}
}

// fileStarter is the TUI's input for capture files.
func fileStarter(inputs []string) func(ctx context.Context, e *engine.Engine) error {
	return func(ctx context.Context, e *engine.Engine) error { return e.Run(ctx, inputs...) }
}

// parseKeep parses --keep: a number of packets, or a size with a unit
// (kB, MB, GB as powers of 1000; KiB, MiB, GiB as powers of 1024); "" is no
// limit.
func parseKeep(v string) (engine.IndexLimit, error) {
	if v == "" {
		return engine.IndexLimit{}, nil
	}
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}}
	for _, u := range units {
		if num, ok := strings.CutSuffix(v, u.suffix); ok {
			n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || n <= 0 || n*float64(u.mult) < 1<<20 {
				return engine.IndexLimit{}, fmt.Errorf("%q: want a size of at least 1 MiB, such as 500MiB or 2GB", v)
			}
			return engine.IndexLimit{Bytes: int64(n * float64(u.mult))}, nil
		}
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1000 {
		return engine.IndexLimit{}, fmt.Errorf("%q: want a number of packets (at least 1000) or a size such as 500MiB", v)
	}
	return engine.IndexLimit{Packets: n}, nil
}

// tuiMemoryLimit is the TUI's soft memory limit (debug.SetMemoryLimit):
// timelineMemory over capture files, whose packets are read again from the
// file. A live capture's packet ring is in memory, so the limit leaves room
// for it and a quarter more: a heap over the soft limit has the collector
// run without a pause, and a full ring of 1 GiB then costs a core while
// the network is quiet. A ring of N packets has no byte bound: no soft
// limit then (the collector's own pacing bounds the heap to twice what is
// live).
func tuiMemoryLimit(keep engine.IndexLimit, live bool) int64 {
	switch {
	case !live:
		return timelineMemory
	case keep.Bytes > 0:
		return timelineMemory + keep.Bytes + keep.Bytes/4
	default:
		return math.MaxInt64
	}
}

// tuiMemoryBudget is the TUI engine's Config.MemoryBudget.
const tuiMemoryBudget = 32 << 20
