package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
)

func newStatsCmd() *cobra.Command {
	var jsonOut, withHealth bool
	var eraFlag, schemaFile string
	c := &cobra.Command{
		Use:   "stats [flags] FILE...",
		Short: "Summarise the conversations, players and packets of captures",
		Long: `Stats reads captures to the end and summarises them: the capture (frames,
time span, link types), every conversation (client and server endpoints, era,
player, hostname, color), packets and bytes per packet name and direction,
malformed and unknown packets, and what was skipped (non-game UDP, non-UDP
frames), and per client the state difs: ok, incomplete, corrupt and missing-base
counts, keyframes and base resets, lost pieces, compression ratio, ack latency.
--json prints the same as one JSON object.

--health adds the netgame health report, per client and per second: inputs
(cdat), late inputs (legacy serr; modern late_cdats counted in the rebuilt
states), difs and their bytes, base resets, incomplete difs, acks and ack
latency, ping→pong and pong→pang times at the capture point, the client-reported
values of stak (chase fps, dsync, player corrections, cpu), and the largest move
of the client's player between consecutive rebuilt states (moves over 12 px per
frame are counted as position jumps: corrections or respawns).`,
		Example: `  pmdump stats capture.pcap
  pmdump stats --health capture.pcap
  pmdump stats --health --json capture.pcap | jq '.health[0].seconds[] | [.t, .ack_ms]'
  pmdump stats --json capture.pcapng | jq .packets`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			era, err := decode.ParseEra(eraFlag)
			if err != nil {
				return usageError{err}
			}
			p := newPipeline(args, era, cmd.ErrOrStderr())
			perConv := map[*session.Conversation]map[session.NameDir]*session.Count{}
			difs := newDifStats()
			var h *health
			opt := replay.Options{}
			emit := difs.state
			if withHealth {
				user, err := loadSchema(schemaFile)
				if err != nil {
					return err
				}
				h = newHealth(user)
				opt.Inspect = h.inspect
				emit = func(s *replay.State) { difs.state(s); h.state(s) }
			}
			rb := newRebuilder(p, opt, emit)
			rb.onMessage = func(m *reassemble.Message) {
				difs.message(m)
				if h != nil && m.Status == reassemble.Complete {
					h.message(m.Client, max(m.SLSN, 0), m.Dst, m.Last)
				}
			}
			rb.onAck = func(a ack) {
				difs.ack(a)
				if h != nil {
					h.ack(a)
				}
			}
			rb.onRecord = func(r *session.Record) {
				if h != nil {
					h.record(r)
				}
				if r.Conv == nil {
					return
				}
				m := perConv[r.Conv]
				if m == nil {
					m = map[session.NameDir]*session.Count{}
					perConv[r.Conv] = m
				}
				k := session.NameDir{Name: r.Packet.NameString(), Dir: r.Dir}
				if m[k] == nil {
					m[k] = &session.Count{}
				}
				m[k].Packets++
				m[k].Bytes += len(r.Packet.Raw)
			}
			runErr := rb.run()
			if len(p.unreadable) == len(args) {
				return runErr
			}
			rep := buildReport(p, perConv)
			rep.Warnings = p.warnings
			rep.Difs = difs.report(p.tracker.Conversations())
			if h != nil {
				rep.Health = h.report()
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
				if h != nil {
					writeHealth(out, rep.Health)
				}
			}
			return runErr
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object")
	c.Flags().StringVar(&eraFlag, "era", "auto", "protocol era: auto, legacy or modern")
	c.Flags().BoolVar(&withHealth, "health", false, "add the netgame health report: per client and per second")
	c.Flags().StringVar(&schemaFile, "schema", "", "state layout `FILE` (JSON) for --health")
	return c
}

// report is what stats prints; its JSON form is the --json output.
type report struct {
	Inputs      []string        `json:"inputs"`
	Frames      int             `json:"frames"`
	UDP         int             `json:"udp_datagrams"`
	NonUDP      int             `json:"non_udp_frames"`
	BadFrames   int             `json:"bad_frames"`
	Fragments   int             `json:"ip_fragments"`
	Reassembled int             `json:"reassembled_datagrams"`
	Truncated   int             `json:"truncated_datagrams"`
	LinkTypes   map[string]int  `json:"link_types"`
	First       *time.Time      `json:"first,omitempty"`
	Last        *time.Time      `json:"last,omitempty"`
	Duration    float64         `json:"duration_s"`
	Game        session.Count   `json:"game"`
	Malformed   session.Count   `json:"malformed"`
	Unknown     session.Count   `json:"unknown"`
	NonGame     session.Count   `json:"non_game_skipped"`
	Eras        map[string]int  `json:"eras"`
	Convs       []convReport    `json:"conversations"`
	Packets     []nameReport    `json:"packets"`
	Difs        []difReport     `json:"difs"`
	Warnings    []string        `json:"warnings,omitempty"`
	Health      []*healthClient `json:"health,omitempty"`
}

type convReport struct {
	ID       int          `json:"id"`
	Client   string       `json:"client"`
	Server   string       `json:"server,omitempty"`
	Listen   string       `json:"listen,omitempty"`
	Era      string       `json:"era"`
	Player   *int         `json:"player,omitempty"`
	Hostname string       `json:"hostname,omitempty"`
	Color    int          `json:"color,omitempty"`
	Level    int          `json:"level,omitempty"`
	Packets  int          `json:"packets"`
	Bytes    int          `json:"bytes"`
	First    time.Time    `json:"first"`
	Last     time.Time    `json:"last"`
	ByName   []nameReport `json:"by_name"`
}

type nameReport struct {
	Type    string `json:"type"`
	Dir     string `json:"dir"`
	Packets int    `json:"packets"`
	Bytes   int    `json:"bytes"`
}

func nameReports(m map[session.NameDir]*session.Count) []nameReport {
	out := make([]nameReport, 0, len(m))
	for k, c := range m {
		out = append(out, nameReport{Type: k.Name, Dir: k.Dir.String(), Packets: c.Packets, Bytes: c.Bytes})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Type != out[j].Type {
			return out[i].Type < out[j].Type
		}
		return out[i].Dir < out[j].Dir
	})
	return out
}

func addrString(s fmt.Stringer, valid bool) string {
	if !valid {
		return ""
	}
	return s.String()
}

func buildReport(p *pipeline, perConv map[*session.Conversation]map[session.NameDir]*session.Count) report {
	st := &p.tracker.Stats
	c := p.counters
	rep := report{
		Inputs: p.inputs, Frames: c.Frames, UDP: c.Datagrams, NonUDP: c.NonUDP, BadFrames: c.BadFrames,
		Fragments: c.Fragments, Reassembled: c.Reassembled, Truncated: c.Truncated, LinkTypes: c.LinkTypes,
		Game: st.Game, Malformed: st.Malformed, Unknown: st.Unknown, NonGame: st.NonGame,
		Eras: map[string]int{},
	}
	if !p.first.IsZero() {
		f, l := p.first.UTC(), p.last.UTC()
		rep.First, rep.Last = &f, &l
		rep.Duration = l.Sub(f).Seconds()
	}
	for e, n := range st.Eras {
		if n > 0 {
			rep.Eras[decode.Era(e).String()] = n
		}
	}
	for _, cv := range p.tracker.Conversations() {
		cr := convReport{
			ID: cv.ID, Client: cv.Client.String(), Server: addrString(cv.Server, cv.Server.IsValid()),
			Listen: addrString(cv.Listen, cv.Listen.IsValid()), Era: cv.Era.String(),
			Hostname: cv.Hostname, Color: cv.Color, Level: cv.Level,
			Packets: cv.Packets, Bytes: cv.Bytes, First: cv.First.UTC(), Last: cv.Last.UTC(),
			ByName: nameReports(perConv[cv]),
		}
		if cv.Player >= 0 {
			pl := cv.Player
			cr.Player = &pl
		}
		rep.Convs = append(rep.Convs, cr)
	}
	rep.Packets = nameReports(st.ByName)
	return rep
}

func writeReport(w io.Writer, r report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Capture\n")
	for _, in := range r.Inputs {
		fmt.Fprintf(tw, "  input\t%s\n", in)
	}
	fmt.Fprintf(tw, "  frames\t%d\n", r.Frames)
	if r.First != nil {
		fmt.Fprintf(tw, "  first\t%s\n", r.First.Format(time.RFC3339Nano))
		fmt.Fprintf(tw, "  last\t%s\n", r.Last.Format(time.RFC3339Nano))
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
	if r.BadFrames > 0 || r.Truncated > 0 || r.Fragments > 0 {
		fmt.Fprintf(tw, "  unparsable frames\t%d\n", r.BadFrames)
		fmt.Fprintf(tw, "  truncated datagrams\t%d\n", r.Truncated)
		fmt.Fprintf(tw, "  IPv4 fragments\t%d (%d datagrams reassembled)\n", r.Fragments, r.Reassembled)
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
	fmt.Fprintf(w, "\nPackets per name and direction\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "  type\tdir\tpackets\tbytes\t\n")
	for _, n := range r.Packets {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t\n", n.Type, n.Dir, n.Packets, n.Bytes)
	}
	tw.Flush()
	if len(r.Difs) > 0 {
		fmt.Fprintf(w, "\nState difs per client\n")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "  client\tplayer\tdifs\tok\tincomplete\tcorrupt\tmissing-base\tkeyframes\tbase resets\tlost pieces\tdup pieces\tratio\tack ms median\tp95\tmax\t\n")
		for _, d := range r.Difs {
			pl := "?"
			if d.Player != nil {
				pl = fmt.Sprint(*d.Player)
			}
			fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t\n", d.Client, pl, d.Difs, d.OK, d.Incomplete,
				d.Corrupt, d.MissingBase, d.Keyframes, d.BaseResets, d.LostPieces, d.DuplicatePieces, d.Ratio, d.AckMs.Median, d.AckMs.P95, d.AckMs.Max)
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
