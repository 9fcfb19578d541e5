package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
)

func newDoctorCmd() *cobra.Command {
	var jsonOut, fast bool
	var eraFlag string
	var files []string
	var lf liveFlags
	c := &cobra.Command{
		Use:   "doctor [flags] FILE... | -i IFACE",
		Short: "Say what went wrong in a netgame, when, for whom, and where to look",
		Long: `Doctor reads captures (or captures live with -i) and lists its findings:
what went wrong in the game, or is worth knowing, when, for whom, in plain
words with the numbers, and the capture frames to look at (first, worst,
last). Findings are sorted by severity (error, warning, info), then time.

The kinds: join, rejoin, mid-game, leave, player-dropped, silent-client,
silent-server, outage, level-change, loss, loss-burst, latency, slow-client,
late-inputs, corrections, base-reset-storm, desync, idle-client,
file-transfer, capture-ends-mid-dif, snap-length, capture-drops,
shared-endpoint, no-version (a conversation whose packets fit no version
pmdump knows). A loss finding leads with an estimated loss rate and its 95 %
interval, from the packets whose delivery the protocol shows in full, then
what is proven lost; a window of concentrated loss is a loss-burst of its
own. The severities of degree (loss, late inputs, slow clients,
corrections, latency, storms) come from one table in terms a player feels,
the same in every version; the README prints it, with each kind's figures
and what the protocol proves lost in each direction.

Every state is rebuilt (for desync, the modern late inputs, the level's number
and a modern player dropped); --fast skips that and finds every other kind (a
modern player dropped from the server's difs to it) at the speed of pmdump
stats.

--json prints one object per finding and line: kind, severity, start, end
(RFC 3339), start_s, end_s (seconds since the first packet), conv, client,
player, summary, figures, frames (first, worst, last) and states.

Doctor exits 0 whatever it finds; a usage error exits 1, an input that
cannot be read 2.`,
		Example: `  pmdump doctor game.pcap
  pmdump doctor --json game.pcap | jq 'select(.severity != "info")'
  pmdump doctor --fast day1.pcap day2.pcap
  sudo pmdump doctor -i eth0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := lf.inputs(cmd, append(files, args...))
			if err != nil {
				return err
			}
			era, err := decode.ParseVersion(eraFlag)
			if err != nil {
				return usageError{err}
			}
			out := bufio.NewWriter(cmd.OutOrStdout())
			defer out.Flush()
			cfg := engine.Config{Era: era, Work: engine.Findings}
			if !fast {
				cfg.Work |= engine.Health
			}
			var e *engine.Engine
			var runErr error
			var first time.Time
			if lf.live() {
				// Live: each finding as it is found, the sorted list at the end.
				cfg.OnEvent = func(ev engine.Event) {
					switch ev := ev.(type) {
					case engine.PacketEvent:
						if first.IsZero() {
							first = ev.First
						}
					case engine.FindingEvent:
						writeFinding(out, ev.Finding, first, jsonOut)
						out.Flush()
					}
				}
				var run *liveRun
				e, run, runErr = driveLive(cmd.Context(), cmd.ErrOrStderr(), cfg, &lf)
				if e == nil {
					return runErr
				}
				defer run.summary(cmd.ErrOrStderr())
				defer e.Close()
				if jsonOut {
					return runErr // every finding was printed as it came
				}
				fmt.Fprintf(out, "\n")
			} else {
				e, runErr = drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, true)
				if e == nil {
					return runErr
				}
				defer e.Close()
			}
			st := e.Stats()
			if st.First != nil {
				first = *st.First
			}
			fs := engine.SortFindings(e.Findings())
			if !jsonOut {
				writeFindingsHeader(out, fs, st.Findings, fast)
			}
			for i := range fs {
				writeFinding(out, &fs[i], first, jsonOut)
			}
			return runErr
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object per finding")
	c.Flags().BoolVar(&fast, "fast", false, "rebuild no state: skip desync and the modern late inputs")
	c.Flags().StringVar(&eraFlag, "era", "auto", eraHelp)
	lf.add(c.Flags(), false)
	c.Flags().StringArrayVarP(&files, "read", "r", nil, "read `FILE` (as tcpdump -r; the same as giving FILE as an argument)")
	return c
}

func writeFindingsHeader(w io.Writer, fs []engine.Finding, c *engine.FindingCounts, fast bool) {
	fmt.Fprintf(w, "%d findings: %d errors, %d warnings, %d info", len(fs), c.Errors, c.Warnings, c.Info)
	if fast {
		fmt.Fprintf(w, " (--fast: desync and modern late inputs not checked)")
	}
	fmt.Fprintln(w)
}

// findingJSON is the --json form of a finding.
type findingJSON struct {
	Kind     string             `json:"kind"`
	Severity string             `json:"severity"`
	Start    string             `json:"start"`
	End      string             `json:"end"`
	StartS   float64            `json:"start_s"`
	EndS     float64            `json:"end_s"`
	Conv     int                `json:"conv"`
	Client   string             `json:"client,omitempty"`
	Player   *int               `json:"player"`
	Summary  string             `json:"summary"`
	Figures  map[string]float64 `json:"figures"`
	Frames   framesJSON         `json:"frames"`
	States   []stateRefJSON     `json:"states,omitempty"`
	Games    []frameRangeJSON   `json:"game_frames,omitempty"`
}

type frameRangeJSON struct {
	SLSN int   `json:"slsn"`
	From int32 `json:"from"`
	To   int32 `json:"to"`
}

type framesJSON struct {
	First int `json:"first"`
	Worst int `json:"worst"`
	Last  int `json:"last"`
}

type stateRefJSON struct {
	SLSN  int   `json:"slsn"`
	Frame int32 `json:"frame"`
}

func writeFinding(w io.Writer, f *engine.Finding, first time.Time, asJSON bool) {
	rel := func(t time.Time) float64 {
		if t.IsZero() || first.IsZero() {
			return 0
		}
		return t.Sub(first).Seconds()
	}
	if asJSON {
		j := findingJSON{Kind: f.Kind, Severity: f.Severity.String(), Start: f.Start.UTC().Format(time.RFC3339Nano), End: f.End.UTC().Format(time.RFC3339Nano),
			StartS: rel(f.Start), EndS: rel(f.End), Conv: f.Conv, Summary: f.Summary, Figures: f.Figures,
			Frames: framesJSON{f.Evidence.First, f.Evidence.Worst, f.Evidence.Last}}
		if f.Client.IsValid() {
			j.Client = f.Client.String()
		}
		if f.Player >= 0 {
			p := f.Player
			j.Player = &p
		}
		for _, s := range f.Evidence.States {
			j.States = append(j.States, stateRefJSON{s.SLSN, s.Frame})
		}
		for _, r := range f.Evidence.Frames {
			j.Games = append(j.Games, frameRangeJSON{r.SLSN, r.From, r.To})
		}
		b, _ := json.Marshal(j)
		w.Write(append(b, '\n'))
		return
	}
	who := "capture"
	if f.Conv > 0 {
		who = fmt.Sprintf("conv %d", f.Conv)
		if f.Player >= 0 {
			who += fmt.Sprintf(" p%d", f.Player)
		}
	}
	when := fmt.Sprintf("%7.1f s", rel(f.Start))
	if d := f.End.Sub(f.Start); d >= 500*time.Millisecond {
		when = fmt.Sprintf("%7.1f–%.1f s", rel(f.Start), rel(f.End))
	}
	fmt.Fprintf(w, "%-7s %-16s %-9s %s: %s\n", f.Severity, when, who, f.Kind, f.Summary)
	var ev []string
	if f.Evidence.First > 0 {
		ev = append(ev, fmt.Sprintf("frames %d", f.Evidence.First))
		if f.Evidence.Worst > 0 && f.Evidence.Worst != f.Evidence.First {
			ev = append(ev, fmt.Sprintf("worst %d", f.Evidence.Worst))
		}
		if f.Evidence.Last > 0 && f.Evidence.Last != f.Evidence.First {
			ev = append(ev, fmt.Sprintf("last %d", f.Evidence.Last))
		}
	}
	for _, s := range f.Evidence.States {
		ev = append(ev, fmt.Sprintf("state %d:%d", s.SLSN, s.Frame))
	}
	for i, r := range f.Evidence.Frames {
		if i == 3 {
			ev = append(ev, "…")
			break
		}
		ev = append(ev, fmt.Sprintf("game frames %d:%d–%d", r.SLSN, r.From, r.To))
	}
	if len(ev) > 0 {
		fmt.Fprintf(w, "%34s%s\n", "", strings.Join(ev, ", "))
	}
}
