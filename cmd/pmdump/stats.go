package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/timefmt"
	"github.com/pmdump/pmdump/schema"
	"github.com/pmdump/pmdump/session"
)

func newStatsCmd() *cobra.Command {
	var jsonOut, withHealth, withStates bool
	var eraFlag, schemaFile string
	var files []string
	var lf liveFlags
	c := &cobra.Command{
		Use:   "stats [flags] FILE... | -i IFACE",
		Short: "Summarise the conversations, players and packets of captures",
		Long: `Stats reads captures to the end and summarises them: the capture (frames,
time span, link types), every conversation (client and server endpoints, era,
player, hostname, color), packets and bytes per packet name and direction,
malformed and unknown packets, and what was skipped (non-game UDP, non-UDP
frames), and per conversation the state difs.

Dif figures come from the stdf piece headers, without inflating anything:
difs (a dif is counted when at least one of its pieces is in the capture),
complete, incomplete (abandoned with pieces missing), corrupt (pieces that
disagree), truncated (every piece came but the snap length cut some),
keyframes (src 0) and base resets (keyframes after the first of their level
sequence), lost pieces (pieces of the counted difs that never arrived: a dif
none of whose pieces were captured is invisible), duplicate pieces (copies of
a piece that had arrived, before or after its dif completed), late pieces
(after their dif was abandoned), compressed bytes and ack latency (the last
piece of a dif → the first stak of its frame). --states also inflates every
dif and rebuilds its state: ok and missing-base counts, state bytes and the
compression ratio (without it they show as -). --health implies --states.
--json prints the same as one JSON object.

--health adds the netgame health report, per conversation and per second:
inputs (cdat), late inputs (legacy serr; modern late_cdats counted in the
rebuilt states), difs and their bytes, base resets, incomplete difs, acks and
ack latency, ping→pong and pong→pang times at the capture point, the
client-reported values (modern stak: chase fps, dsync, player corrections, cpu;
legacy sdak: chase fps, late stdf, skipped frames; legacy stak: dif
corrections), and the largest move of the client's player between consecutive
rebuilt states (moves over 12 px per frame are counted as position jumps:
corrections or respawns). A value without a sample is - (null in JSON).
The difs, base resets and ack latency of the health report are those of the
dif table (one definition each). It ends with the count of findings by
severity; pmdump doctor lists them.

-i IFACE captures live instead (as pmdump live does, root or CAP_NET_RAW
needed) until Ctrl-C, SIGTERM or --duration, then prints the summary of what
was seen and the kernel's received and dropped counts.`,
		Example: `  pmdump stats capture.pcap
  pmdump stats --states capture.pcap
  pmdump stats --health capture.pcap
  pmdump stats --health --json capture.pcap | jq '.health[0].seconds[] | [.t, .ack_ms]'
  pmdump stats --json capture.pcapng | jq .packets
  pmdump stats -i eth0 --duration 1m`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := lf.inputs(cmd, append(files, args...))
			if err != nil {
				return err
			}
			era, err := decode.ParseVersion(eraFlag)
			if err != nil {
				return usageError{err}
			}
			if schemaFile != "" && !withHealth {
				return usagef("--schema is read only with --health (it names the players' fields of the states)")
			}
			user, err := loadSchema(schemaFile)
			if err != nil {
				return err
			}
			cfg := engine.Config{Era: era, Work: engine.Difs | engine.Counts, Schema: user,
				Events: engine.WarningEvents | engine.ProgressEvents}
			if withStates {
				cfg.Work |= engine.States
			}
			if withHealth {
				cfg.Work |= engine.Health | engine.Findings
			}
			var e *engine.Engine
			var run *liveRun
			var runErr error
			if lf.live() {
				e, run, runErr = driveLive(cmd.Context(), cmd.ErrOrStderr(), cfg, &lf)
			} else {
				e, runErr = drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, true)
			}
			if e == nil {
				return runErr
			}
			defer e.Close()
			rep := e.Stats()
			if run != nil {
				rep.Inputs = []string{"live: " + strings.Join(lf.ifaces, ", ")}
				defer run.summary(cmd.ErrOrStderr())
			}
			if err := checkSchema(user, rep.Difs); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if jsonOut {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				writeReport(out, rep)
				if withHealth {
					writeHealth(out, rep.Health)
					if c := rep.Findings; c != nil {
						fmt.Fprintf(out, "\nFindings: %d errors, %d warnings, %d info (pmdump doctor lists them, with the frames to look at)\n", c.Errors, c.Warnings, c.Info)
					}
				}
			}
			return runErr
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object")
	c.Flags().StringVar(&eraFlag, "era", "auto", eraHelp)
	c.Flags().BoolVar(&withStates, "states", false, "also inflate every dif and rebuild its state (ok, missing-base, ratio)")
	c.Flags().BoolVar(&withHealth, "health", false, "add the netgame health report: per conversation and per second (implies --states)")
	c.Flags().StringVar(&schemaFile, "schema", "", "state layout `FILE` (JSON) for --health")
	lf.add(c.Flags(), false)
	c.Flags().StringArrayVarP(&files, "read", "r", nil, "read `FILE` (as tcpdump -r; the same as giving FILE as an argument)")
	return c
}

// checkSchema refuses a --schema whose size is not that of the states.
func checkSchema(user *schema.Schema, difs []engine.DifStats) error {
	if user == nil {
		return nil
	}
	for _, d := range difs {
		if d.StateSize != 0 && d.StateSize != user.Size {
			return usagef("--schema %s describes %d-byte states; the states of conversation %d have %d bytes", user.Name, user.Size, d.Conv, d.StateSize)
		}
	}
	return nil
}

func writeReport(w io.Writer, r engine.Stats) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Capture\n")
	for _, in := range r.Inputs {
		fmt.Fprintf(tw, "  input\t%s\n", in)
	}
	fmt.Fprintf(tw, "  frames\t%d\n", r.Frames)
	if r.First != nil {
		fmt.Fprintf(tw, "  first\t%s\n", timefmt.AppendRFC3339(nil, *r.First, 9))
		fmt.Fprintf(tw, "  last\t%s\n", timefmt.AppendRFC3339(nil, *r.Last, 9))
		fmt.Fprintf(tw, "  duration\t%.3f s\n", r.Duration)
	}
	lts := make([]string, 0, len(r.LinkTypes))
	for k, v := range r.LinkTypes {
		lts = append(lts, fmt.Sprintf("%s (%d)", k, v))
	}
	sort.Strings(lts)
	fmt.Fprintf(tw, "  link types\t%v\n", lts)
	fmt.Fprintf(tw, "  UDP datagrams\t%d\n", r.UDP)
	fmt.Fprintf(tw, "  game packets\t%d (%d bytes)\n", r.Game.Packets, r.Game.Bytes)
	fmt.Fprintf(tw, "  malformed\t%d (%d bytes)\n", r.Malformed.Packets, r.Malformed.Bytes)
	fmt.Fprintf(tw, "  unknown names\t%d (%d bytes)\n", r.Unknown.Packets, r.Unknown.Bytes)
	fmt.Fprintf(tw, "  non-game UDP skipped\t%d (%d bytes)\n", r.NonGame.Packets, r.NonGame.Bytes)
	fmt.Fprintf(tw, "  non-UDP frames skipped\t%d\n", r.NonUDP)
	if r.Unsupported > 0 {
		fmt.Fprintf(tw, "  frames of unsupported link types\t%d\n", r.Unsupported)
	}
	if r.KernelReceived > 0 || r.KernelDropped > 0 {
		fmt.Fprintf(tw, "  kernel received / dropped\t%d / %d\n", r.KernelReceived, r.KernelDropped)
	}
	if r.BadFrames > 0 || r.Truncated > 0 || r.Fragments > 0 {
		fmt.Fprintf(tw, "  unparsable frames\t%d\n", r.BadFrames)
		fmt.Fprintf(tw, "  truncated datagrams\t%d\n", r.Truncated)
		fmt.Fprintf(tw, "  IPv4 fragments\t%d (%d datagrams reassembled, %d fragments given up)\n", r.Fragments, r.Reassembled, r.FragmentsDropped)
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(tw, "  warning\t%s\n", warn)
	}
	tw.Flush()
	fmt.Fprintf(w, "\nConversations\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "  #\tclient\tserver\tera\tplayer\thost\tcolor\tpackets\tbytes\tduration\n")
	for _, c := range r.Convs {
		pl := "?"
		if c.Player != nil {
			pl = fmt.Sprint(*c.Player)
		}
		host := "-"
		if c.Hostname != "" {
			host = strconv.Quote(c.Hostname) // never raw bytes on a terminal
		}
		color := "-"
		if c.Color != 0 {
			color = strconv.Itoa(c.Color)
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%.1f s\n", c.ID, c.Client, c.Server, c.Era, pl, host,
			color, c.Packets, c.Bytes, c.Last.Sub(c.First).Seconds())
	}
	tw.Flush()
	for _, c := range r.Convs {
		if c.Unrecognised != "" {
			fmt.Fprintf(w, "  conversation %d: %s\n", c.ID, engine.NoVersion(c.Unrecognised))
		}
	}
	fmt.Fprintf(w, "\nPackets per name and direction\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  type\tdir\tpackets\tbytes\t\n")
	for _, n := range r.Packets {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t\n", n.Type, n.Dir, n.Packets, n.Bytes)
	}
	tw.Flush()
	if r.Dropped != (engine.DroppedStats{}) || r.Untracked.Any() {
		u := r.Untracked
		fmt.Fprintf(w, "\nNot tracked one by one (bounds against hostile captures)\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		atLeast := ""
		if u.AtLeast {
			atLeast = "at least "
		}
		if u.Conversations > 0 {
			fmt.Fprintf(tw, "  client endpoints past %d conversations\t%s%d (%d packets in the overflow conversation 0)\n", session.MaxConversations, atLeast, u.Conversations, r.Dropped.Conversations)
		}
		if u.Rejoins > 0 {
			fmt.Fprintf(tw, "  rejoins past %d conversations of one endpoint (kept in its last)\t%d\n", session.MaxSessions, u.Rejoins)
		}
		if u.Servers > 0 {
			fmt.Fprintf(tw, "  server endpoints past %d\t%s%d\n", session.MaxServers, atLeast, u.Servers)
		}
		if u.NameKeys > 0 {
			fmt.Fprintf(tw, "  unknown packet names past %d\t%s%d (%d packets, %d bytes)\n", session.MaxNames, atLeast, u.NameKeys, u.Names.Packets, u.Names.Bytes)
		}
		if r.Dropped.Names > 0 {
			fmt.Fprintf(tw, "  packets of unknown names not counted per conversation\t%d\n", r.Dropped.Names)
		}
		if r.Dropped.HeaderlessPieces > 0 {
			fmt.Fprintf(tw, "  stdf pieces cut inside their header\t%d\n", r.Dropped.HeaderlessPieces)
		}
		if r.Dropped.ImplausibleDifs > 0 {
			fmt.Fprintf(tw, "  legacy difs with implausible frames (level sequence not inferred from them)\t%d\n", r.Dropped.ImplausibleDifs)
		}
		tw.Flush()
	}
	if len(r.Difs) > 0 {
		what := "from the piece headers; --states rebuilds them"
		if r.Rebuilt {
			what = "rebuilt"
		}
		fmt.Fprintf(w, "\nState difs per conversation (%s)\n", what)
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  conv\tclient\tplayer\tdifs\tcomplete\tok\tincomplete\tcorrupt\tmissing-base\ttruncated\tkeyframes\tbase resets\tlost pieces\tdup pieces\tlate pieces\tratio\tack ms median\tp95\tmax\t\n")
		for _, d := range r.Difs {
			pl := "?"
			if d.Player != nil {
				pl = fmt.Sprint(*d.Player)
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%d\t%d\t%s\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%.1f\t%.1f\t%.1f\t\n", d.Conv, d.Client, pl, d.Difs, d.Complete,
				optInt(d.OK), d.Incomplete, d.Corrupt, optInt(d.MissingBase), d.Truncated, d.Keyframes, d.BaseResets, d.LostPieces,
				d.DuplicatePieces, d.LatePieces, opt(d.Ratio, "%.1f"), d.AckMs.Median, d.AckMs.P95, d.AckMs.Max)
		}
		tw.Flush()
	}
	for _, c := range r.Convs {
		fmt.Fprintf(w, "\nConversation %d (client %s", c.ID, c.Client)
		if c.Player != nil {
			fmt.Fprintf(w, ", player %d", *c.Player)
		}
		fmt.Fprintf(w, ")\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  type\tdir\tpackets\tbytes\t\n")
		for _, n := range c.ByName {
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t\n", n.Type, n.Dir, n.Packets, n.Bytes)
		}
		tw.Flush()
	}
}
