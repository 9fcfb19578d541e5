package engine

import (
	"time"

	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// The states rebuilt ahead of their turn (see Prioritize), kept packed
// while they wait for it.

// maxEarly is the most states rebuilt ahead of their turn that wait for
// their turn in the figures and events (each an earlyState, 120 bytes):
// past it, the rebuild goes on in capture order until they are out. It is
// more than one client's difs in a one-hour game (144,000 at 40 a second),
// so a client asked for first is rebuilt to its end ahead of the others.
const maxEarly = 1 << 18

// earlyState is a state rebuilt ahead of its turn as it waits for it: a
// replay.State without its bytes, packed, with what the health's and the
// findings' inspections put in its Extra. It holds no pointer, so the
// collector never looks into the hundred thousand of them a prioritized
// client leaves waiting; what does (an error, a sha256, the caller's own
// Extra, a time that is not a plain capture time) waits beside it in
// behind.sides.
type earlyState struct {
	ts                                                                             int64 // unix nanoseconds, in behind.locs[loc]
	hash                                                                           statedif.Hash
	sample                                                                         sample // the health's (hasSample)
	line                                                                           int32  // in behind.lineTab
	seq, baseSeq, conv, player, slsn, src, dst, n, size, compressed, pieces, count int32
	status                                                                         replay.Status
	loc                                                                            uint8
	active                                                                         uint8 // the findings' (hasActive)
	has                                                                            uint8
}

// What an earlyState has (earlyState.has).
const (
	hasSample   = 1 << iota // the health's inspection: Extra was a healthExtra
	hasActive               // the findings' inspection: a findingsExtra in it
	hasActiveOK             // and its ok
	hasSide                 // more in behind.sides
)

// earlySide is what an earlyState cannot hold.
type earlySide struct {
	ts    time.Time // when ownTS
	ownTS bool
	err   error
	extra any
	sum   [32]byte
}

// pack makes s an earlyState (under the engine's lock).
func (b *behind) pack(s *replay.State) earlyState {
	l := s.Line()
	i, ok := b.lineIDs[l]
	if !ok {
		if b.lineIDs == nil {
			b.lineIDs = map[reassemble.Chain]int32{}
		}
		i = int32(len(b.lineTab))
		b.lineIDs[l] = i
		b.lineTab = append(b.lineTab, l)
	}
	es := earlyState{ts: s.TS.UnixNano(), hash: s.Hash, line: i, status: s.Status,
		seq: int32(s.Seq), baseSeq: int32(s.BaseSeq), conv: int32(s.Conv), player: int32(s.Player), slsn: int32(s.SLSN),
		src: s.Src, dst: s.Dst, n: int32(s.N), size: int32(s.Size), compressed: int32(s.Compressed),
		pieces: int32(s.Pieces), count: int32(s.Count)}
	x := s.Extra
	if he, ok := x.(healthExtra); ok {
		es.sample, es.has, x = he.sample, es.has|hasSample, he.extra
	}
	if fx, ok := x.(findingsExtra); ok {
		es.active, es.has, x = fx.active, es.has|hasActive, fx.extra
		if fx.ok {
			es.has |= hasActiveOK
		}
	}
	side := earlySide{err: s.Err, extra: x, sum: s.Sum}
	if loc, ok := b.locID(s.TS.Location()); ok && time.Unix(0, es.ts).In(b.locs[loc]) == s.TS {
		es.loc = loc
	} else {
		side.ts, side.ownTS = s.TS, true
	}
	if side.ownTS || side.err != nil || side.extra != nil || side.sum != ([32]byte{}) {
		if b.sides == nil {
			b.sides = map[int32]*earlySide{}
		}
		b.sides[es.seq] = &side
		es.has |= hasSide
	}
	return es
}

// locID is the number of a state time's location in b.locs, false when
// the table is full.
func (b *behind) locID(loc *time.Location) (uint8, bool) {
	for i, l := range b.locs {
		if l == loc {
			return uint8(i), true
		}
	}
	if len(b.locs) > 255 {
		return 0, false
	}
	b.locs = append(b.locs, loc)
	return uint8(len(b.locs) - 1), true
}

// unpack makes the replay.State of an earlyState.
func (b *behind) unpack(es *earlyState) *replay.State {
	s := &replay.State{TS: time.Unix(0, es.ts).In(b.locs[es.loc]), Hash: es.hash, Client: b.lineTab[es.line].Client, Status: es.status,
		Seq: int(es.seq), BaseSeq: int(es.baseSeq), Conv: int(es.conv), Player: int(es.player), SLSN: int(es.slsn),
		Src: es.src, Dst: es.dst, N: int(es.n), Size: int(es.size), Compressed: int(es.compressed),
		Pieces: int(es.pieces), Count: int(es.count)}
	if es.has&hasSide != 0 {
		side := b.sides[es.seq]
		delete(b.sides, es.seq)
		if side.ownTS {
			s.TS = side.ts
		}
		s.Err, s.Extra, s.Sum = side.err, side.extra, side.sum
	}
	if es.has&hasActive != 0 {
		s.Extra = findingsExtra{active: es.active, ok: es.has&hasActiveOK != 0, extra: s.Extra}
	}
	if es.has&hasSample != 0 {
		s.Extra = healthExtra{sample: es.sample, extra: s.Extra}
	}
	return s
}
