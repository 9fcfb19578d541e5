package engine

import (
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
)

// TruthRow is one row of a ground-truth CSV: a state a client applied, or
// (server files) a dif the server sent.
type TruthRow struct {
	Line     int   // line in the file
	Player   int   // the player the server sent it to; -1 in a client's file
	Src, Dst int32 // the dif's base and destination frames
	HasSrc   bool
	Sum      [32]byte
	SLSN     int // -1 when the file has no slsn column (legacy)
}

// Truth is a ground-truth file: the game's own record of the states a
// client applied (client_gt.csv: dst_frame,src_frame,sha256[,slsn,level])
// or of the difs the server sent (server_gt.csv:
// player,src,dst,compressed_size,num_pieces,sha256_of_dst_state,slsn,level;
// server_stdf_gt.csv: player,src,dst,compressed_size,num_pieces,dst_state_sha256).
type Truth struct {
	Path   string
	Server bool // a server's file: rows of every player, including difs the network lost
	Rows   []TruthRow
}

// ReadTruth reads a ground-truth CSV of either era and either side.
func ReadTruth(path string) (*Truth, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s: empty file, want a header dst_frame,src_frame,sha256[,slsn,level] or player,src,dst,…", path)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.TrimSpace(h)] = i
	}
	t := &Truth{Path: path}
	names := map[string]string{"dst": "dst_frame", "src": "src_frame", "sum": "sha256"}
	if _, ok := col["player"]; ok {
		t.Server = true
		names = map[string]string{"dst": "dst", "src": "src", "sum": "sha256_of_dst_state"}
		if _, ok := col["dst_state_sha256"]; ok {
			names["sum"] = "dst_state_sha256"
		}
	}
	for _, need := range []string{names["dst"], names["sum"]} {
		if _, ok := col[need]; !ok {
			return nil, fmt.Errorf("%s: header %v has no %s column (want dst_frame,src_frame,sha256[,slsn,level], or a server's player,src,dst,…,sha256)", path, head, need)
		}
	}
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
		row := TruthRow{Line: line, SLSN: -1, Player: -1}
		dst, err := strconv.ParseInt(get(names["dst"]), 10, 32)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %s: %w", path, line, names["dst"], err)
		}
		row.Dst = int32(dst)
		if v := get(names["src"]); v != "" {
			src, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("%s line %d: %s: %w", path, line, names["src"], err)
			}
			row.Src, row.HasSrc = int32(src), true
		}
		if v := get("slsn"); v != "" {
			if row.SLSN, err = strconv.Atoi(v); err != nil {
				return nil, fmt.Errorf("%s line %d: slsn: %w", path, line, err)
			}
		}
		if t.Server {
			if row.Player, err = strconv.Atoi(get("player")); err != nil {
				return nil, fmt.Errorf("%s line %d: player: %w", path, line, err)
			}
		}
		sum, err := hex.DecodeString(get(names["sum"]))
		if err != nil || len(sum) != 32 {
			return nil, fmt.Errorf("%s line %d: sha256 %q is not 64 hex digits", path, line, get(names["sum"]))
		}
		copy(row.Sum[:], sum)
		t.Rows = append(t.Rows, row)
	}
	if len(t.Rows) == 0 {
		return nil, fmt.Errorf("%s: no rows to verify", path)
	}
	return t, nil
}

// Verifier compares rebuilt states with a ground truth.
type Verifier struct {
	truth  *Truth
	from   int32
	to     int32
	ranged bool
	// the states added, by line, then by frame
	lines   map[reassemble.Chain]map[int32][]got
	players map[reassemble.Chain]int
}

type got struct {
	slsn int
	src  int32
	sum  [32]byte
}

// NewVerifier returns a verifier of t. With ranged, only rows whose dst
// frame is in [from, to] count.
func NewVerifier(t *Truth, ranged bool, from, to int32) *Verifier {
	return &Verifier{truth: t, ranged: ranged, from: from, to: to, lines: map[reassemble.Chain]map[int32][]got{}, players: map[reassemble.Chain]int{}}
}

// Add takes one rebuilt state (only OK states count).
func (v *Verifier) Add(s *replay.State) {
	if s.Status != replay.OK {
		return
	}
	l := s.Line()
	m := v.lines[l]
	if m == nil {
		m = map[int32][]got{}
		v.lines[l] = m
	}
	m[s.Dst] = append(m[s.Dst], got{s.SLSN, s.Src, s.Sum})
	if s.Player >= 0 {
		v.players[l] = s.Player
	}
}

// Verification is the outcome of a verification.
type Verification struct {
	Rows, Matched, Mismatched, Missing int
	Problems                           []string // the first few rows that did not match, one line each
	// Lost is true for a server's file: its missing rows are difs the
	// capture does not hold (lost on the network), not a failure.
	Lost bool
}

// OK reports whether the verification passed.
func (r Verification) OK() bool {
	if r.Lost {
		return r.Mismatched == 0 && r.Matched > 0
	}
	return r.Mismatched == 0 && r.Missing == 0
}

// Result compares the states added with the ground truth. A client's file
// must be compared with the states of one line: more is an error that lists
// them.
func (v *Verifier) Result() (Verification, error) {
	res := Verification{Lost: v.truth.Server}
	byPlayer := map[int]reassemble.Chain{}
	var lines []reassemble.Chain
	for l := range v.lines {
		lines = append(lines, l)
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].Conv < lines[j].Conv })
	if !v.truth.Server {
		if len(lines) > 1 {
			return res, &ManyClientsError{Lines: lines}
		}
	} else {
		for _, l := range lines {
			if p, ok := v.players[l]; ok {
				if _, dup := byPlayer[p]; !dup {
					byPlayer[p] = l
				}
			}
		}
	}
	for _, row := range v.truth.Rows {
		if v.ranged && (row.Dst < v.from || row.Dst > v.to) {
			continue
		}
		var states map[int32][]got
		if v.truth.Server {
			l, ok := byPlayer[row.Player]
			if !ok {
				continue // a player whose states were not asked for
			}
			states = v.lines[l]
		} else if len(lines) == 1 {
			states = v.lines[lines[0]]
		}
		res.Rows++
		var cands []got
		for _, g := range states[row.Dst] {
			if row.SLSN < 0 || g.slsn == row.SLSN {
				cands = append(cands, g)
			}
		}
		matched, sumOnly := false, false
		for _, g := range cands {
			if g.sum == row.Sum {
				if !row.HasSrc || g.src == row.Src {
					matched = true
					break
				}
				sumOnly = true
			}
		}
		switch {
		case matched:
			res.Matched++
		case len(cands) == 0:
			res.Missing++
			if len(res.Problems) < 10 && !v.truth.Server {
				res.Problems = append(res.Problems, fmt.Sprintf("line %d: state %d%s was not rebuilt for this client", row.Line, row.Dst, slsnNote(row.SLSN)))
			}
		case sumOnly:
			res.Mismatched++
			if len(res.Problems) < 10 {
				res.Problems = append(res.Problems, fmt.Sprintf("line %d: state %d%s: rebuilt from frame %d, ground truth from frame %d", row.Line, row.Dst, slsnNote(row.SLSN), cands[0].src, row.Src))
			}
		default:
			res.Mismatched++
			if len(res.Problems) < 10 {
				res.Problems = append(res.Problems, fmt.Sprintf("line %d: state %d%s: sha256 %x, ground truth %x", row.Line, row.Dst, slsnNote(row.SLSN), cands[0].sum, row.Sum))
			}
		}
	}
	if res.Rows == 0 {
		return res, fmt.Errorf("none of the %d rows of %s is about the states asked for", len(v.truth.Rows), v.truth.Path)
	}
	return res, nil
}

func slsnNote(slsn int) string {
	if slsn < 0 {
		return ""
	}
	return fmt.Sprintf(" (slsn %d)", slsn)
}

// ManyClientsError is a client's ground truth compared with the states of
// several clients: one must be chosen.
type ManyClientsError struct {
	Lines []reassemble.Chain
}

func (e *ManyClientsError) Error() string {
	var cs []string
	for _, l := range e.Lines {
		cs = append(cs, l.String())
	}
	return fmt.Sprintf("states of %d clients (%s)", len(e.Lines), strings.Join(cs, ", "))
}
