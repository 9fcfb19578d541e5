package synth

// dropSilent drops the modern clients the server got no stak from for
// dropFrames frames: their player becomes inactive dropLead frames later,
// and the server sends them nothing more.
func (s *server) dropSilent() {
	f := s.frame()
	for _, c := range s.clients {
		if !c.joined {
			continue
		}
		if c.dropAt < 0 && c.lastStak+dropFrames < f {
			c.dropAt = f + dropLead
		}
		if c.dropAt >= 0 && f >= c.dropAt {
			c.joined = false
			s.world.leave(c.player)
			s.g.sum.Drops = append(s.g.sum.Drops, Drop{Player: c.player, Frame: int(f), SLSN: int(s.slsn), At: s.g.now})
		}
	}
}
