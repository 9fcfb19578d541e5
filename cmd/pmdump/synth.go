package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

type synthOpts struct {
	output      string
	players     int
	duration    time.Duration
	era         string
	loss        float64
	seed        int64
	levelChange time.Duration
	noTruth     bool
	faults      faultFlags
}

func newSynthCmd() *cobra.Command {
	var o synthOpts
	c := &cobra.Command{
		Use:   "synth -o FILE [flags]",
		Short: "Write a synthetic capture of a LAN game",
		Long: `Synth simulates a Purple Martians LAN game, a server (player 0) and 1 to 7
clients, and writes its traffic as a capture: Ethernet, IPv4 and UDP, the
server at 10.0.0.1 and client N at 10.0.0.(N+1).

The game follows the protocol of the chosen version of the game (--era; the
versions are listed below): legacy and modern, every host on port 24785 as
on a real LAN, the 1234/5678 handshake, the server answering each client
from its own ephemeral port; from 2024-04 on, no handshake, the clients on
ports of their own and the server sending everything from 24785. Then the
join, cdat input, the legacy era's sdat/sdak/serr game-move sync or the
later versions' ping/pong/pang (and, in 2024-06, a clog for every netgame
log line of every client), and state difs (stdf) made as the game makes
them: base − new bytewise, zlib level 7, pieces of the version's size
(1000 or 1400 bytes), against the client's last acknowledged state (one of
the last 8 sent to it) or zeros, acknowledged with stak; states of the
version's size and layout. Legacy: one dif every 5 frames, round robin;
the others: one per frame to every client, and a level change half-way
through (slsn 0 then 1, frames restart at 0) unless --level-change says
otherwise.

--loss drops that fraction of the datagrams, in both directions (not the
join packets, which the game never retransmits). The same flags and --seed
always give the same bytes; time stamps start at 2026-01-01 00:00:00 UTC
plus the seed in seconds.

FILE ending in .pcapng gives pcapng (ns time stamps), anything else pcap
(µs); "-" writes pcap to stdout. Beside FILE (dir/name.ext) the ground truth
is written in the formats of the real captures' ground truth:
  dir/name_server_gt.csv      one row per dif sent (lost ones included):
    legacy  player,src,dst,compressed_size,num_pieces,dst_state_sha256
    others  player,src,dst,compressed_size,num_pieces,sha256_of_dst_state,slsn,level
  dir/name_cN_client_gt.csv   per player N, one row per dif it applied:
    legacy  dst_frame,src_frame,sha256
    others  dst_frame,src_frame,sha256,slsn,level
where each sha256 is of the full state (106144 bytes legacy, 112384 modern,
and the size of each later version's state).

Versions: ` + strings.Join(decode.VersionNames(), ", ") + `.`,
		Example: `  pmdump synth -o game.pcap --players 3 --duration 10s --era modern
  pmdump synth -o lossy.pcapng --players 2 --duration 1m --era legacy --loss 0.05 --seed 7
  pmdump synth -o - --players 1 --duration 5s --era modern | pmdump read -`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSynth(cmd, &o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.output, "output", "o", "", "write the capture to `FILE` (.pcapng: pcapng; -: pcap on stdout)")
	f.IntVar(&o.players, "players", 2, "number of clients, `N` = 1..7 (the server is player 0)")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "game time to generate, e.g. 30s, 5m, 1h")
	f.StringVar(&o.era, "era", "modern", "the game's wire version: "+strings.Join(decode.VersionNames(), ", "))
	f.Float64Var(&o.loss, "loss", 0, "fraction `P` of datagrams to drop, 0 <= P < 1")
	f.Int64Var(&o.seed, "seed", 1, "random seed; the same seed gives the same capture")
	f.DurationVar(&o.levelChange, "level-change", 0, "every version but legacy: when the level changes (0: half-way; negative: never)")
	f.BoolVar(&o.noTruth, "no-truth", false, "do not write the ground-truth CSV files")
	o.faults.add(f)
	return c
}

func (o *synthOpts) config() (synth.Config, error) {
	var cfg synth.Config
	if o.output == "" {
		return cfg, usagef("-o FILE is required")
	}
	era, err := decode.ParseVersion(o.era)
	if err != nil || era == decode.VersionUnknown {
		return cfg, usagef("--era must be one of %s, not %q", strings.Join(decode.VersionNames(), ", "), o.era)
	}
	switch {
	case o.players < 1 || o.players > synth.MaxClients:
		return cfg, usagef("--players must be 1..%d, not %d", synth.MaxClients, o.players)
	case o.duration <= 0:
		return cfg, usagef("--duration must be positive, not %v", o.duration)
	case math.IsNaN(o.loss) || o.loss < 0 || o.loss >= 1:
		return cfg, usagef("--loss must be at least 0 and below 1, not %v", o.loss)
	case o.levelChange != 0 && !era.LevelSeqOn(decode.KindDifPiece):
		return cfg, usagef("--level-change: the %s version's synthetic game has no level change", era)
	case o.levelChange > 0 && o.levelChange >= o.duration:
		return cfg, usagef("--level-change %v is not inside the %v game", o.levelChange, o.duration)
	}
	faults, err := o.faults.parse()
	if err != nil {
		return cfg, err
	}
	cfg = synth.Config{Era: era, Players: o.players, Duration: o.duration, Loss: o.loss, Seed: o.seed, LevelChange: o.levelChange, Faults: faults}
	if err := cfg.Validate(); err != nil {
		return cfg, usageError{err}
	}
	return cfg, nil
}

func runSynth(cmd *cobra.Command, o *synthOpts) error {
	cfg, err := o.config()
	if err != nil {
		return err
	}
	toStdout := o.output == "-"
	var out io.Writer = cmd.OutOrStdout()
	format := synth.Pcap
	var file *os.File
	if !toStdout {
		format = synth.FormatFor(o.output)
		if file, err = os.Create(o.output); err != nil {
			return fmt.Errorf("cannot create capture: %w", err)
		}
		out = file
	}
	if toStdout && !o.noTruth {
		fmt.Fprintln(cmd.ErrOrStderr(), "pmdump: writing to stdout: no ground-truth files (give -o FILE for them)")
	}
	var sink synth.TruthSink
	var csv *synth.CSVWriter
	if !toStdout && !o.noTruth {
		if csv, err = synth.NewCSVWriter(o.output, cfg.Era, cfg.Players); err != nil {
			file.Close()
			return err
		}
		sink = csv
	}
	sum, err := generate(cfg, out, format, sink)
	if csv != nil {
		err = errors.Join(err, csv.Close())
	}
	if file != nil {
		if cerr := file.Close(); cerr != nil {
			err = errors.Join(err, fmt.Errorf("closing %s: %w", o.output, cerr))
		}
	}
	if err != nil {
		if file != nil {
			os.Remove(o.output) // a half-written capture is of no use
		}
		return err
	}
	if !toStdout {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s, %d clients, %v: %d datagrams written, %d lost (%.1f%%), %d difs (%d keyframes), %d applied\n",
			o.output, cfg.Era.Label(), cfg.Players, cfg.Duration, sum.Sent-sum.Lost, sum.Lost, 100*sum.LossRate(),
			sum.Difs, sum.Keyframes, sum.Applied)
		if csv != nil {
			server, clients := synth.TruthPaths(o.output, cfg.Players)
			fmt.Fprintf(cmd.ErrOrStderr(), "ground truth: %s, %s\n", server, strings.Join(clients, ", "))
			if d := describeFaults(cfg.Faults); d != "" {
				if err := synth.WriteFaults(o.output, cfg, sum); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "%s: %s\n", d, synth.FaultsPath(o.output))
			}
		}
	}
	return nil
}

func generate(cfg synth.Config, out io.Writer, format synth.Format, sink synth.TruthSink) (*synth.Summary, error) {
	cw, err := synth.NewCaptureWriter(out, format)
	if err != nil {
		return nil, err
	}
	sum, err := synth.Generate(cfg, cw, sink)
	if err != nil {
		return nil, err
	}
	if err := cw.Flush(); err != nil {
		return nil, err
	}
	return sum, nil
}
