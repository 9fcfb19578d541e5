package synth

import "github.com/pmdump/pmdump/decode"

// sdatDropped is the legacy game-move player state of a client dropped
// for want of sdaks.
const sdatDropped = 71

// dropSilent drops the clients the server got no acknowledgement from
// (modern: stak; legacy: sdak) for dropFrames frames: their player becomes
// inactive dropLead frames later, and the server sends them nothing more.
// The legacy server says it in its game moves (player state 71, "no sdak
// for 100 frames"), entered on every frame until the drop is done, as the
// game's does.
func (s *server) dropSilent() {
	f := s.frame()
	for _, c := range s.clients {
		if !c.joined {
			continue
		}
		if c.dropAt < 0 && c.lastStak+dropFrames < f {
			c.dropAt = f + dropLead
		}
		if s.g.era == decode.Legacy && c.dropAt >= 0 && f < c.dropAt {
			s.moves = append(s.moves, gameMove{f + dropLead, 1, int32(c.player), sdatDropped})
		}
		if c.dropAt >= 0 && f >= c.dropAt {
			c.joined = false
			s.world.leave(c.player)
			s.g.sum.Drops = append(s.g.sum.Drops, Drop{Player: c.player, Frame: int(f), SLSN: int(s.slsn), At: s.g.now})
		}
	}
}
