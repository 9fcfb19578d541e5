package engine_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/replay"
)

// A verifier compares rebuilt states with a client's ground truth by frame;
// a range of frames no row is in is an error that names the problem and no
// flag (the front end says which of its flags set the range).
func TestVerifier(t *testing.T) {
	sum := func(s string) [32]byte { return sha256.Sum256([]byte(s)) }
	a, b := sum("state 11"), sum("state 12")
	csv := "dst_frame,src_frame,sha256\n11,0," + hex.EncodeToString(a[:]) + "\n12,11," + hex.EncodeToString(b[:]) + "\n"
	path := filepath.Join(t.TempDir(), "c1_client_gt.csv")
	if err := os.WriteFile(path, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	truth, err := engine.ReadTruth(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name                               string
		ranged                             bool
		from, to                           int32
		states                             []replay.State
		rows, matched, mismatched, missing int
		err                                string
	}{
		{name: "both states", states: []replay.State{{Src: 0, Dst: 11, Sum: a}, {Src: 11, Dst: 12, Sum: b}}, rows: 2, matched: 2},
		{name: "one wrong, one missing", states: []replay.State{{Src: 0, Dst: 11, Sum: b}}, rows: 2, mismatched: 1, missing: 1},
		{name: "the range of one row", ranged: true, from: 12, to: 20, states: []replay.State{{Src: 11, Dst: 12, Sum: b}}, rows: 1, matched: 1},
		{name: "a range of no row", ranged: true, from: 100, to: 200, err: "none of the 2 rows of " + path + " is about the states asked for"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			v := engine.NewVerifier(truth, tt.ranged, tt.from, tt.to)
			for _, s := range tt.states {
				s.Status, s.Player, s.SLSN = replay.OK, 1, -1
				v.Add(&s)
			}
			res, err := v.Result()
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "--") {
					t.Errorf("error %q names a flag", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.Rows != tt.rows || res.Matched != tt.matched || res.Mismatched != tt.mismatched || res.Missing != tt.missing {
				t.Errorf("%d rows: %d matched, %d mismatched, %d missing; want %d: %d, %d, %d",
					res.Rows, res.Matched, res.Mismatched, res.Missing, tt.rows, tt.matched, tt.mismatched, tt.missing)
			}
		})
	}
}
