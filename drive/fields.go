package drive

import "github.com/pmdump/pmdump/decode"

// The packet fields drive reads, resolved once: by their role where the
// packet tables mark one, by name otherwise. A field that does not resolve
// stops the program (and every test) at start-up, not when a packet comes.
var (
	fieldFrame    = decode.MustRoleRef(decode.RoleFrame, "stdf", "sjon", "cdat", "snfo")
	fieldLevelSeq = decode.MustRoleRef(decode.RoleLevelSeq, "stdf", "sjon")
	fieldPlayer   = decode.MustKindRoleRef(decode.KindJoinReply, decode.RolePlayer)
	fieldDifBase  = decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleDifBase)
	fieldSeq      = decode.MustRoleRef(decode.RolePieceSeq, "stdf", "sfil")
	fieldCount    = decode.MustRoleRef(decode.RolePieceCount, "stdf", "sfil")
	fieldDifData  = decode.MustKindRef(decode.KindDifPiece, "data")
	fieldFileID   = decode.MustKindRef(decode.KindFilePiece, "id")
	fieldPongT1   = decode.MustKindRef(decode.KindProbeReply, "t1")
	fieldMove     = decode.MustKindRef(decode.KindInput, "move")
	fieldColor    = decode.MustKindRef(decode.KindJoinRequest, "color")
	fieldHostname = decode.MustKindRef(decode.KindJoinRequest, "hostname")
)

// intOf is the field's raw integer value in p, 0 when p has none (another
// era's layout, or a field not decoded).
func intOf(f decode.Ref, p *decode.Packet) int64 {
	v, _ := f.Int(p)
	return v
}

// valueOf is the field's value in p, the zero Value when p has none.
func valueOf(f decode.Ref, p *decode.Packet) decode.Value {
	v, _ := f.Value(p)
	return v
}
