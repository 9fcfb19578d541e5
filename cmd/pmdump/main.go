// Command pmdump decodes, analyses and synthesises the network traffic of
// Purple Martians LAN games.
//
// Run "pmdump --help" for the commands.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"runtime/pprof"

	"github.com/pmdump/pmdump/decode"
	"github.com/spf13/cobra"
)

// Exit statuses, as tcpdump and tshark use them.
const (
	exitOK         = 0
	exitUsage      = 1 // bad flags, arguments or filter
	exitUnreadable = 2 // an input could not be read at all
	exitInternal   = 3 // pmdump itself failed (no room for its temporary files, say)
	exitDamaged    = 4 // an input is damaged (cut in the middle of a record): the result is partial
)

// usageError marks errors that are the user's invocation, not the input.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// eraHelp is the help of every command's --era: the versions of the game
// pmdump speaks, from decode's registry.
var eraHelp = "the game's wire version: auto (told from the bytes of each conversation), or one of " + strings.Join(decode.VersionNames(), ", ")

// internalError marks a failure of pmdump itself, not of its input or
// invocation.
type internalError struct{ err error }

func (e internalError) Error() string { return e.err.Error() }
func (e internalError) Unwrap() error { return e.err }

// damagedError marks inputs that were cut in the middle of a record (or
// stopped at a record that cannot be read): what came before was
// analysed and printed.
type damagedError struct{ err error }

func (e damagedError) Error() string { return e.err.Error() }
func (e damagedError) Unwrap() error { return e.err }

// inputError marks an input that could not be read at all.
type inputError struct{ err error }

func (e inputError) Error() string { return e.err.Error() }
func (e inputError) Unwrap() error { return e.err }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "pmdump",
		Short: "Protocol analyzer for the Purple Martians netgame",
		Long: `pmdump decodes the UDP traffic of Purple Martians LAN games, both protocol
eras (legacy 2018-2022, big-endian; modern 2023-, little-endian), from pcap
and pcapng captures (plain or gzip-compressed, or a stream on stdin) or live
from a network interface. It rebuilds every state the server sent each client,
shows a state in the game's terms with a map of the level, diffs states between
frames and between clients, reports the netgame's health and what went wrong in
it (doctor), sends a capture again, serves a recorded game to real game clients,
plays a recording's clients against a real game server (drive), writes a
Wireshark dissector and writes a one-file HTML report that replays the game in
2D with plots.

Inputs can also be the bundled sample captures: ` + samplesHelp() + `.`,
		Example: `  pmdump read sample:modern
  pmdump read -Y 'stdf and src == 0' game.pcap
  pmdump stats game.pcapng
  pmdump states game.pcap --player 1
  pmdump state game.pcap --player 1 --frame 1200 --map
  pmdump diff game.pcap --player 1 1200 1240
  pmdump doctor game.pcap
  pmdump tui game.pcap
  pmdump report game.pcap -o game.html
  sudo pmdump live -i eth0
  pmdump synth -o game.pcap --players 3 --duration 10s --era modern`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			cmd.Help()
			if len(args) > 0 {
				return usagef("unknown command %q", args[0])
			}
			return usagef("no command given")
		},
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nRun '%s --help' for usage", err, c.CommandPath())}
	})
	root.AddCommand(newReadCmd(), newStatsCmd(), newStatesCmd(), newStateCmd(), newDiffCmd(), newSynthCmd(), newDissectorCmd(), newReplayCmd(), newServeCmd(), newLiveCmd(), newDriveCmd(), newDoctorCmd(), newReportCmd())
	root.AddCommand(newTUICmd())
	root.AddCommand(newVersionsCmd())
	return root
}

func main() {
	code := run(os.Args[1:], os.Stdout, os.Stderr)
	profStop()
	os.Exit(code)
}

// run runs pmdump with the given arguments and returns its exit status.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "pmdump:", err)
	var ie inputError
	if errors.As(err, &ie) {
		return exitUnreadable
	}
	var de damagedError
	if errors.As(err, &de) {
		return exitDamaged
	}
	var xe internalError
	if errors.As(err, &xe) {
		fmt.Fprintln(stderr, "pmdump: hint: temporary files go to $TMPDIR (now "+os.TempDir()+"); set TMPDIR to a folder with room")
		return exitInternal
	}
	return exitUsage
}

func init() {
	profStop = startProfile(os.Getenv("PMDUMP_CPUPROFILE"), os.Stderr)
}

// profStop ends the CPU profile PMDUMP_CPUPROFILE asked for.
var profStop = func() {}

// startProfile writes a CPU profile of the whole run to path (the
// environment variable PMDUMP_CPUPROFILE; "" for none), for go tool pprof,
// and returns what ends it. A profile that cannot be written is said on
// stderr, and the run goes on without it.
func startProfile(path string, stderr io.Writer) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(stderr, "pmdump: warning: PMDUMP_CPUPROFILE: %v: no CPU profile is written\n", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		fmt.Fprintf(stderr, "pmdump: warning: PMDUMP_CPUPROFILE: %v: no CPU profile is written\n", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintf(stderr, "pmdump: warning: PMDUMP_CPUPROFILE: %v\n", err)
		}
	}
}
