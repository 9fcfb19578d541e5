package decode

// PieceFields returns the indexes, in Fields, of the fields a layout marks
// RolePieceSeq, RolePieceCount and RolePieceStart: the header of a payload
// sent in pieces (stdf, snfo, sfil), whose piece size is the RoleSize field.
// Decode checks such a header: count is not 0, seq is below count and start
// is not negative (errors "piece count is 0", "piece seq S is not below
// piece count C", "start byte B is negative"). ok is false for a layout
// without the three roles.
func (l *Layout) PieceFields() (seq, count, start int, ok bool) {
	if !l.pieces() {
		return -1, -1, -1, false
	}
	return l.seq, l.count, l.start, true
}

// pieces reports whether the layout has the three piece roles.
func (l *Layout) pieces() bool { return l.seq >= 0 && l.count >= 0 && l.start >= 0 }
