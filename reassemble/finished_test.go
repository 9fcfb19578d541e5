package reassemble_test

import (
	"testing"

	"github.com/pmdump/pmdump/reassemble"
)

// TestFinishedKeep checks that an Assembler remembers exactly a client's
// newest FinishedKeep finished messages, past several turns of its memory:
// a piece of one of them again is late, a piece of an older one begins a
// new message.
func TestFinishedKeep(t *testing.T) {
	for _, extra := range []int{0, 1, 5, reassemble.FinishedKeep + 3, 3*reassemble.FinishedKeep + 7} {
		a := reassemble.New(reassemble.Limits{}, func(*reassemble.Message) {})
		total := reassemble.FinishedKeep + extra
		piece := func(i int) reassemble.Piece {
			return reassemble.Piece{Key: reassemble.Key{Client: client1, Conv: 1, SLSN: 1, Src: int32(i), Dst: int32(i + 1)},
				Count: 1, Data: []byte{1, 2, 3}, N: i + 1, TS: t0}
		}
		for i := range total {
			if o := a.Add(piece(i)); o != reassemble.Accepted {
				t.Fatalf("%d finished: message %d's piece %v, want accepted", total, i, o)
			}
		}
		for i := total - 1; i >= extra; i-- { // the newest, remembered
			if o := a.Add(piece(i)); o == reassemble.Accepted || o == reassemble.Rejected {
				t.Errorf("%d finished: message %d's piece again %v, want late", total, i, o)
			}
		}
		for i := extra - 1; i >= 0 && i >= extra-3; i-- { // forgotten
			if o := a.Add(piece(i)); o != reassemble.Accepted {
				t.Errorf("%d finished: message %d's piece again %v, want accepted (forgotten)", total, i, o)
			}
		}
	}
}
