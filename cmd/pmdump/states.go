package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/timefmt"
	"github.com/pmdump/pmdump/packetfmt"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

type statesOpts struct {
	pickFlags
	json    bool
	frames  string
	verify  string
	explain bool
}

// frameRange is an inclusive range of frames; the zero value is everything.
type frameRange struct {
	set      bool
	from, to int32
}

func parseFrames(s string) (frameRange, error) {
	if s == "" {
		return frameRange{}, nil
	}
	a, b, ok := strings.Cut(s, "-")
	from, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 32)
	to, err2 := from, error(nil)
	if ok {
		to, err2 = strconv.ParseInt(strings.TrimSpace(b), 10, 32)
	}
	if err1 != nil || err2 != nil || to < from {
		return frameRange{}, fmt.Errorf("--frames %q: want A-B with A <= B, or N", s)
	}
	return frameRange{true, int32(from), int32(to)}, nil
}

func (f frameRange) has(n int32) bool { return !f.set || (n >= f.from && n <= f.to) }

func newStatesCmd() *cobra.Command {
	var o statesOpts
	c := &cobra.Command{
		Use:   "states [flags] FILE...",
		Short: "Rebuild every game state the server sent each client",
		Long: `States reassembles the server's state difs (stdf) per client, rebuilds each
state (new = base − dif, bytewise; src 0 means an all-zero base) and prints one
line per state: capture frame of the dif's last piece, time, client, player,
level sequence, src → dst, compressed size, pieces received/total, status and
the sha256 of the full state.

Status is ok, missing-base (the base state was never rebuilt: capture started
late or its dif was lost), incomplete (pieces missing) or corrupt (pieces that
disagree, or a dif that does not inflate to the state).

--verify compares with a ground-truth CSV of either era (header
dst_frame,src_frame,sha256[,slsn,level]): every row must be a rebuilt state
with the same sha256. It prints matched, mismatched and missing counts and
exits 1 when a row does not match or was not rebuilt.

--explain adds each dif's anatomy: per region, the bytes and values it changes
and the fields they are in (the non-zero bytes of a dif are the changed ones), so
you see what made a dif large.

JSON keys (--json, one object per line): client, player, slsn, src, dst, ts,
num (capture frame of the dif's last piece), size, compressed, pieces, count,
status, sha256 (when ok), error (when not), anatomy (with --explain: region,
bytes, values, fields).`,
		Example: `  pmdump states capture.pcap
  pmdump states --player 2 --frames 1000-1200 capture.pcap
  pmdump states --json capture.pcapng | jq -r 'select(.status != "ok")'
  pmdump states --explain --frames 1200-1210 capture.pcap
  pmdump states capture.pcap --verify c1_client_gt.csv --player 1`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runStates(cmd, args, &o) },
	}
	f := c.Flags()
	f.BoolVar(&o.json, "json", false, "one JSON object per line")
	f.StringVar(&o.era, "era", "auto", eraHelp)
	f.IntVar(&o.player, "player", -1, "only the client with player number `P`")
	f.StringVar(&o.client, "client", "", "only the client at `IP:PORT`")
	f.IntVar(&o.conv, "conv", 0, "only the client of conversation `N` (the numbers pmdump stats prints)")
	f.StringVar(&o.frames, "frames", "", "only dst frames in `A-B`")
	f.StringVar(&o.verify, "verify", "", "compare with the ground-truth `CSV` file")
	f.BoolVar(&o.explain, "explain", false, "say for each dif how many bytes and values it changes per region, and in which fields")
	f.StringVar(&o.schema, "schema", "", "state layout `FILE` (JSON) for --explain")
	o.slsn, o.player = -1, -1
	return c
}

// loadSchema loads a --schema file; "" is none.
func loadSchema(path string) (*schema.Schema, error) {
	if path == "" {
		return nil, nil
	}
	s, err := schema.Load(path)
	if err != nil {
		return nil, inputError{err}
	}
	return s, nil
}

func runStates(cmd *cobra.Command, args []string, o *statesOpts) error {
	era, err := decode.ParseVersion(o.era)
	if err != nil {
		return usageError{err}
	}
	fr, err := parseFrames(o.frames)
	if err != nil {
		return usageError{err}
	}
	sel, err := o.pickFlags.selector(false)
	if err != nil {
		return err
	}
	if o.schema != "" && !o.explain {
		return usagef("--schema is read only with --explain")
	}
	if o.explain && o.verify != "" {
		return usagef("--verify prints no states: --explain has no effect with it")
	}
	var ver *engine.Verifier
	if o.verify != "" {
		truth, err := engine.ReadTruth(o.verify)
		if err != nil {
			return inputError{err}
		}
		ver = engine.NewVerifier(truth, fr.set, fr.from, fr.to)
	}
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
	defer out.Flush()
	var buf []byte
	shown := 0
	cfg := engine.Config{Era: era, Work: engine.States, SHA256: true}
	if !sel.Any() {
		cfg.Select = &sel // only the states asked for are rebuilt
	}
	if o.explain {
		user, err := loadSchema(o.schema)
		if err != nil {
			return err
		}
		cfg.Inspect = engine.Explainer(user)
	}
	matched := map[reassemble.Chain]bool{}
	var ambiguous []reassemble.Chain
	stop := new(engine.Stopper)
	cfg.Stopper = stop
	cfg.OnEvent = func(ev engine.Event) {
		se, ok := ev.(engine.StateEvent)
		if !ok {
			return
		}
		s := se.State
		if !sel.Match(s.Line(), s.Player) || !fr.has(s.Dst) {
			return
		}
		if !sel.Any() && sel.Conv == 0 && !matched[s.Line()] {
			matched[s.Line()] = true
			if len(matched) > 1 && ver == nil {
				for l := range matched {
					ambiguous = append(ambiguous, l)
				}
				stop.Stop()
				return
			}
		}
		if ver != nil {
			ver.Add(s)
			return
		}
		shown++
		if o.json {
			buf = appendStateJSON(buf[:0], s)
		} else {
			buf = appendStateLine(buf[:0], s)
			if an, ok := s.Extra.([]engine.RegionAnatomy); ok {
				buf = appendAnatomy(buf, an)
			}
		}
		out.Write(buf)
	}
	e, runErr := drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, true)
	if e == nil {
		return runErr
	}
	defer e.Close()
	if ambiguous != nil {
		out.Flush()
		sort.Slice(ambiguous, func(i, j int) bool { return ambiguous[i].Conv < ambiguous[j].Conv })
		return pickError(&engine.AmbiguousError{Sel: sel, Candidates: ambiguous})
	}
	if shown == 0 && ver == nil && (!sel.Any() || fr.set) {
		fmt.Fprintln(cmd.ErrOrStderr(), "pmdump: no state matched --player, --client, --conv or --frames")
	}
	if ver != nil {
		res, err := ver.Result()
		var many *engine.ManyClientsError
		if errors.As(err, &many) {
			return usageError{fmt.Errorf("--verify: %w; choose one with --player, --client or --conv", err)}
		} else if err != nil {
			return usageError{fmt.Errorf("--verify: %w", err)}
		}
		for _, l := range res.Problems {
			fmt.Fprintln(out, l)
		}
		fmt.Fprintf(out, "verify %s: %d rows: %d matched, %d mismatched, %d missing", o.verify, res.Rows, res.Matched, res.Mismatched, res.Missing)
		if res.Lost && res.Missing > 0 {
			fmt.Fprint(out, " (a server's file lists the difs the network lost too: missing rows are not a failure)")
		}
		fmt.Fprintln(out)
		if !res.OK() {
			out.Flush()
			return verifyError{fmt.Errorf("%d of %d states differ from the ground truth, %d were not rebuilt", res.Mismatched, res.Rows, res.Missing)}
		}
	}
	return runErr
}

// verifyError is a failed verification: exit status 1.
type verifyError struct{ error }

func appendStateLine(b []byte, s *replay.State) []byte {
	b = packetfmt.AppendPad(b, int64(s.N), 6)
	b = append(b, ' ')
	b = timefmt.AppendTime(b, s.TS, 6)
	b = append(b, ' ')
	b = s.Client.AppendTo(b)
	if s.Player >= 0 {
		b = append(b, " p"...)
		b = strconv.AppendInt(b, int64(s.Player), 10)
	} else {
		b = append(b, " p?"...)
	}
	b = append(b, " slsn "...)
	b = strconv.AppendInt(b, int64(s.SLSN), 10)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(s.Src), 10)
	b = append(b, " → "...)
	b = strconv.AppendInt(b, int64(s.Dst), 10)
	b = append(b, "] "...)
	b = strconv.AppendInt(b, int64(s.Compressed), 10)
	b = append(b, " B "...)
	b = strconv.AppendInt(b, int64(s.Pieces), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(s.Count), 10)
	b = append(b, ' ')
	b = append(b, s.Status.String()...)
	if s.Status == replay.OK {
		b = append(b, ' ')
		b = hex.AppendEncode(b, s.Sum[:])
	} else if s.Err != nil {
		b = append(b, " ("...)
		b = append(b, s.Err.Error()...)
		b = append(b, ')')
	}
	return append(b, '\n')
}

func appendStateJSON(b []byte, s *replay.State) []byte {
	o := openJSON(b)
	o.addr("client", s.Client)
	if s.Player >= 0 {
		o.int("player", int64(s.Player))
	}
	o.int("slsn", int64(s.SLSN))
	o.int("src", int64(s.Src))
	o.int("dst", int64(s.Dst))
	o.time("ts", s.TS)
	o.int("num", int64(s.N))
	o.int("size", int64(s.Size))
	o.int("compressed", int64(s.Compressed))
	o.int("pieces", int64(s.Pieces))
	o.int("count", int64(s.Count))
	o.name("status", s.Status.String())
	if s.Status == replay.OK {
		o.hex("sha256", s.Sum[:])
		if an, ok := s.Extra.([]engine.RegionAnatomy); ok {
			j, _ := json.Marshal(an)
			o.raw("anatomy", j)
		}
	} else if s.Err != nil {
		o.str("error", s.Err.Error())
	}
	return append(o.close(), '\n')
}
