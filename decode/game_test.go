package decode_test

import (
	"bytes"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// TestPieces checks how a compressed message is cut: n/1000 + 1 pieces of
// at most 1000 bytes that add up to it, the last one empty when n is a
// multiple of 1000.
func TestPieces(t *testing.T) {
	tests := []struct {
		n, pieces, last int
	}{
		{0, 1, 0}, {1, 1, 1}, {999, 1, 999}, {1000, 2, 0}, {1001, 2, 1}, {2000, 3, 0}, {3606, 4, 606},
	}
	for _, tt := range tests {
		z := make([]byte, tt.n)
		for i := range z {
			z[i] = byte(i * 7)
		}
		if got := decode.Modern.Pieces(tt.n); got != tt.pieces {
			t.Errorf("Pieces(%d) = %d, want %d", tt.n, got, tt.pieces)
			continue
		}
		var all []byte
		for i := range tt.pieces {
			p := decode.Modern.Piece(z, i)
			if len(p) > decode.Modern.PieceSize() {
				t.Errorf("%d bytes: piece %d of %d bytes", tt.n, i, len(p))
			}
			all = append(all, p...)
		}
		if !bytes.Equal(all, z) || len(decode.Modern.Piece(z, tt.pieces-1)) != tt.last {
			t.Errorf("%d bytes: pieces do not add up or last piece is not %d bytes", tt.n, tt.last)
		}
		if p := decode.Modern.Piece(z, tt.pieces+3); len(p) != 0 {
			t.Errorf("%d bytes: a piece past the end holds %d bytes", tt.n, len(p))
		}
	}
}
