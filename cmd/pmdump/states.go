package main

import (
	"bufio"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/schema"
)

type statesOpts struct {
	json    bool
	era     string
	player  int
	client  string
	frames  string
	verify  string
	explain bool
	schema  string
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

JSON keys (--json, one object per line): client, player, slsn, src, dst, ts, n,
size, compressed, pieces, count, status, sha256 (when ok), error (when not),
anatomy (with --explain: region, bytes, values, fields).`,
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
	f.StringVar(&o.era, "era", "auto", "protocol era: auto, legacy or modern")
	f.IntVar(&o.player, "player", -1, "only the client with player number `P`")
	f.StringVar(&o.client, "client", "", "only the client at `IP:PORT`")
	f.StringVar(&o.frames, "frames", "", "only dst frames in `A-B`")
	f.StringVar(&o.verify, "verify", "", "compare with the ground-truth `CSV` file")
	f.BoolVar(&o.explain, "explain", false, "say for each dif how many bytes and values it changes per region, and in which fields")
	f.StringVar(&o.schema, "schema", "", "state layout `FILE` (JSON) for --explain")
	return c
}

// newClientFilter parses --player and --client.
func newClientFilter(player int, client string) (clientFilter, error) {
	cf := clientFilter{player: player}
	if player >= 0 && client != "" {
		return cf, usagef("give --player or --client, not both")
	}
	if client != "" {
		var err error
		if cf.client, err = netip.ParseAddrPort(client); err != nil {
			return cf, usagef("--client %q: %v", client, err)
		}
	}
	return cf, nil
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

// clientFilter selects states by player number or client endpoint.
type clientFilter struct {
	player int
	client netip.AddrPort
}

func (c clientFilter) match(s *replay.State) bool {
	if c.client.IsValid() && s.Client != c.client {
		return false
	}
	return c.player < 0 || s.Player == c.player
}

func runStates(cmd *cobra.Command, args []string, o *statesOpts) error {
	era, err := decode.ParseEra(o.era)
	if err != nil {
		return usageError{err}
	}
	fr, err := parseFrames(o.frames)
	if err != nil {
		return usageError{err}
	}
	cf, err := newClientFilter(o.player, o.client)
	if err != nil {
		return err
	}
	var truth []truthRow
	if o.verify != "" {
		if truth, err = readTruth(o.verify); err != nil {
			return inputError{err}
		}
	}
	out := bufio.NewWriterSize(cmd.OutOrStdout(), 1<<16)
	defer out.Flush()
	p := newPipeline(args, era, cmd.ErrOrStderr())
	var buf []byte
	shown := 0
	got := map[netip.AddrPort]map[replay.Frame][]([32]byte){}
	opt := replay.Options{}
	if o.explain {
		user, err := loadSchema(o.schema)
		if err != nil {
			return err
		}
		opt.Inspect = explainer(user)
	}
	rb := newRebuilder(p, opt, func(s *replay.State) {
		if !cf.match(s) || !fr.has(s.Dst) {
			return
		}
		if truth != nil {
			if s.Status == replay.OK {
				m := got[s.Client]
				if m == nil {
					m = map[replay.Frame][][32]byte{}
					got[s.Client] = m
				}
				k := replay.Frame{SLSN: s.SLSN, N: s.Dst}
				m[k] = append(m[k], s.Sum)
			}
			return
		}
		shown++
		if o.json {
			buf = appendStateJSON(buf[:0], s)
		} else {
			buf = appendStateLine(buf[:0], s)
			if an, ok := s.Extra.([]regionAnatomy); ok {
				buf = appendAnatomy(buf, an)
			}
		}
		out.Write(buf)
	})
	runErr := rb.run()
	if len(p.unreadable) == len(args) {
		return runErr
	}
	if shown == 0 && truth == nil && (cf.player >= 0 || cf.client.IsValid() || fr.set) {
		fmt.Fprintln(cmd.ErrOrStderr(), "pmdump: no state matched --player, --client or --frames")
	}
	if truth != nil {
		if err := verify(out, truth, got, o); err != nil {
			out.Flush()
			return err
		}
	}
	return runErr
}

func appendStateLine(b []byte, s *replay.State) []byte {
	b = appendPad(b, int64(s.N), 6)
	b = append(b, ' ')
	b = s.TS.UTC().AppendFormat(b, "15:04:05.000000")
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
	b = append(b, `{"client":"`...)
	b = s.Client.AppendTo(b)
	b = append(b, '"')
	if s.Player >= 0 {
		b = append(b, `,"player":`...)
		b = strconv.AppendInt(b, int64(s.Player), 10)
	}
	b = append(b, `,"slsn":`...)
	b = strconv.AppendInt(b, int64(s.SLSN), 10)
	b = append(b, `,"src":`...)
	b = strconv.AppendInt(b, int64(s.Src), 10)
	b = append(b, `,"dst":`...)
	b = strconv.AppendInt(b, int64(s.Dst), 10)
	b = append(b, `,"ts":"`...)
	b = s.TS.UTC().AppendFormat(b, rfc3339Fixed)
	b = append(b, `","n":`...)
	b = strconv.AppendInt(b, int64(s.N), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, int64(s.Size), 10)
	b = append(b, `,"compressed":`...)
	b = strconv.AppendInt(b, int64(s.Compressed), 10)
	b = append(b, `,"pieces":`...)
	b = strconv.AppendInt(b, int64(s.Pieces), 10)
	b = append(b, `,"count":`...)
	b = strconv.AppendInt(b, int64(s.Count), 10)
	b = append(b, `,"status":"`...)
	b = append(b, s.Status.String()...)
	b = append(b, '"')
	if s.Status == replay.OK {
		b = append(b, `,"sha256":"`...)
		b = hex.AppendEncode(b, s.Sum[:])
		b = append(b, '"')
		if an, ok := s.Extra.([]regionAnatomy); ok {
			b = append(b, `,"anatomy":`...)
			j, _ := json.Marshal(an)
			b = append(b, j...)
		}
	} else if s.Err != nil {
		b = append(b, `,"error":`...)
		b = decode.AppendJSONString(b, s.Err.Error())
	}
	return append(b, "}\n"...)
}

// truthRow is one row of a ground-truth CSV: a state the client applied.
type truthRow struct {
	line     int
	dst, src int32
	sum      [32]byte
	slsn     int // -1 when the CSV has no slsn column (legacy)
}

// readTruth reads a ground-truth CSV of either era: header
// dst_frame,src_frame,sha256[,slsn,level].
func readTruth(path string) (rows []truthRow, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header dst_frame,src_frame,sha256[,slsn,level]", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	for _, need := range []string{"dst_frame", "sha256"} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: header %v has no %s column (want dst_frame,src_frame,sha256[,slsn,level])", path, head, need)
		}
	}
	defer func() {
		if len(rows) == 0 && err == nil {
			err = fmt.Errorf("%s: no rows to verify", path)
		}
	}()
	for line := 2; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		row := truthRow{line: line, slsn: -1}
		dst, err := strconv.ParseInt(get("dst_frame"), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: dst_frame: %w", path, line, err)
		}
		row.dst = int32(dst)
		if v := get("src_frame"); v != "" {
			src, _ := strconv.ParseInt(v, 10, 32)
			row.src = int32(src)
		}
		if v := get("slsn"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: slsn: %w", path, line, err)
			}
			row.slsn = n
		}
		sum, err := hex.DecodeString(get("sha256"))
		if err != nil || len(sum) != 32 {
			return nil, fmt.Errorf("%s line %d: sha256 %q is not 64 hex digits", path, line, get("sha256"))
		}
		copy(row.sum[:], sum)
		rows = append(rows, row)
	}
	return rows, nil
}

// verify compares the ground truth with the rebuilt states of one client.
func verify(w io.Writer, truth []truthRow, got map[netip.AddrPort]map[replay.Frame][][32]byte, o *statesOpts) error {
	if len(got) > 1 {
		var cs []string
		for c := range got {
			cs = append(cs, c.String())
		}
		sort.Strings(cs)
		return usagef("--verify: states of %d clients (%s); choose one with --player or --client", len(got), strings.Join(cs, ", "))
	}
	if len(got) == 0 {
		return verifyError{fmt.Errorf("--verify: no state of that client was rebuilt, none of the %d rows can match", len(truth))}
	}
	var states map[replay.Frame][][32]byte
	for _, m := range got {
		states = m
	}
	matched, mismatched, missing := 0, 0, 0
	var firstBad []string
	for _, row := range truth {
		var sums [][32]byte
		if row.slsn >= 0 {
			sums = states[replay.Frame{SLSN: row.slsn, N: row.dst}]
		} else {
			for f, s := range states {
				if f.N == row.dst {
					sums = append(sums, s...)
				}
			}
		}
		switch {
		case len(sums) == 0:
			missing++
			if len(firstBad) < 10 {
				firstBad = append(firstBad, fmt.Sprintf("line %d: state %d%s was not rebuilt for this client", row.line, row.dst, slsnNote(row.slsn)))
			}
		case containsSum(sums, row.sum):
			matched++
		default:
			mismatched++
			if len(firstBad) < 10 {
				firstBad = append(firstBad, fmt.Sprintf("line %d: state %d%s: sha256 %x, ground truth %x", row.line, row.dst, slsnNote(row.slsn), sums[0], row.sum))
			}
		}
	}
	for _, l := range firstBad {
		fmt.Fprintln(w, l)
	}
	fmt.Fprintf(w, "verify %s: %d rows: %d matched, %d mismatched, %d missing\n", o.verify, len(truth), matched, mismatched, missing)
	if mismatched > 0 || missing > 0 {
		return verifyError{fmt.Errorf("%d of %d states differ from the ground truth, %d were not rebuilt", mismatched, len(truth), missing)}
	}
	return nil
}

func slsnNote(slsn int) string {
	if slsn < 0 {
		return ""
	}
	return fmt.Sprintf(" (slsn %d)", slsn)
}

// verifyError is a failed verification: exit status 1.
type verifyError struct{ error }

func containsSum(sums [][32]byte, s [32]byte) bool {
	for _, x := range sums {
		if x == s {
			return true
		}
	}
	return false
}
