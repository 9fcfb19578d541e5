package decode

import "reflect"

// PieceFields returns the indexes, in Fields, of the seq, count and start
// fields of a layout whose Check is the piece check Decode applies to the
// pieces of stdf, snfo and sfil: count is not 0, seq is below count and
// start is not negative (errors "piece count is 0", "piece seq S is not
// below piece count C", "start byte B is negative"). ok is false for a
// layout without that check, so generators of other decoders can tell a
// check they know from one they do not.
func (l *Layout) PieceFields() (seq, count, start int, ok bool) {
	if l.Check == nil || reflect.ValueOf(l.Check).Pointer() != reflect.ValueOf(pieceCheck).Pointer() {
		return -1, -1, -1, false
	}
	return l.seq, l.count, l.start, true
}
