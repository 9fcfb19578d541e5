package synth

import "github.com/pmdump/pmdump/decode"

// sdatDropped is the game-move player state of a client dropped for want
// of acknowledgements.
var sdatDropped = func() int32 {
	v, _ := decode.PlayerStates.Value("dropped_silent")
	return int32(v)
}()

// dropSilent drops the clients the server got no acknowledgement from
// (stak; sdak in the game-moves versions) for the version's drop rule:
// their player becomes inactive dropLead frames later, and the server sends
// them nothing more. A game-moves server says it in its game moves (player
// state 71, "no sdak for 100 frames"), entered on every frame until the
// drop is done, as the game's does.
func (s *server) dropSilent() {
	f := s.frame()
	rule := s.g.era.Drop()
	for _, c := range s.clients {
		if !c.joined {
			continue
		}
		if c.dropAt < 0 && f > int32(rule.After) && c.lastStak+int32(rule.Frames) < f {
			c.dropAt = f + dropLead
		}
		if s.g.moves && c.dropAt >= 0 && f < c.dropAt {
			s.moves = append(s.moves, gameMove{f + dropLead, 1, int32(c.player), sdatDropped})
		}
		if c.dropAt >= 0 && f >= c.dropAt {
			c.joined = false
			s.world.leave(c.player)
			s.g.sum.Drops = append(s.g.sum.Drops, Drop{Player: c.player, Frame: int(f), SLSN: int(s.slsn), At: s.g.now})
		}
	}
}
