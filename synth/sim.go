package synth

import (
	"math/rand/v2"
	"slices"

	"github.com/pmdump/pmdump/decode"
)

// Sim is the generator's game world on its own, for a game server that
// runs it frame by frame: players join and change their controls, Step
// simulates one frame, State is the resulting game state in the era's
// layout, and Clone copies the whole world so a server can go back to an
// earlier frame and simulate it again. Everything is deterministic: the
// same seed, joins and controls in the same frames give the same states.
type Sim struct {
	w   *world
	pcg *rand.PCG
}

// NewSim returns the world of a server that has just started, on the era's
// first level (the modern overworld, level 1) at frame 0, with the
// server's own player 0 at its spawn point: for a seed, the world of
// Generate's server with the same seed.
func NewSim(era decode.Version, seed int64) *Sim {
	stream := uint64(4) // the world's stream, as in Generate
	pcg := rand.NewPCG(uint64(seed), stream*0x9e3779b97f4a7c15+1)
	level := int32(modernLevel)
	if era.Sync() == decode.GameMoves {
		level = legacyLevel
	}
	s := &Sim{w: newWorld(layoutFor(era), rand.New(pcg), level), pcg: pcg}
	s.w.rng.Float64() // the generator's server draws its clock's start here
	s.w.join(0, 8, 3)
	return s
}

// Clone returns an independent copy of the world.
func (s *Sim) Clone() *Sim {
	pcg := *s.pcg
	w := *s.w
	w.st = slices.Clone(s.w.st)
	w.rng = rand.New(&pcg)
	w.enemies = slices.Clone(s.w.enemies)
	w.items = slices.Clone(s.w.items)
	w.lifts = slices.Clone(s.w.lifts)
	w.dirtyItems = slices.Clone(s.w.dirtyItems)
	for p := range w.players {
		w.players[p].queue = slices.Clone(s.w.players[p].queue)
	}
	return &Sim{w: &w, pcg: &pcg}
}

// Join makes player p (1..7) active with a color; the state shows it from
// the next Step on.
func (s *Sim) Join(p int, color int32) { s.w.join(p, color, 2) }

// Active reports whether player p is in the game.
func (s *Sim) Active(p int) bool { return p >= 0 && p < maxPlayers && s.w.players[p].active }

// SetMove sets player p's control bits (cdat's move) from the next Step on.
func (s *Sim) SetMove(p int, move byte) {
	if p >= 0 && p < maxPlayers {
		s.w.players[p].move = move
	}
}

// Step simulates one frame: the frame number goes up by one and State
// changes accordingly.
func (s *Sim) Step() { s.w.step() }

// Frame is the number of frames simulated on this level: the frame of the
// state State holds.
func (s *Sim) Frame() int32 { return s.w.frame }

// Level is the level being played.
func (s *Sim) Level() int32 { return s.w.level }

// State is the current game state; it belongs to the Sim and changes with
// the next Step.
func (s *Sim) State() []byte { return s.w.st }

// CountLate counts one late input of player p (late_cdats), as the
// generator's server does for a cdat for a frame before the previous one.
func (s *Sim) CountLate(p int) {
	if p >= 0 && p < maxPlayers {
		s.w.players[p].lateCdats++
	}
}

// BeginLevelDone starts the level-done phase of frames frames: the level
// ends at frame at and next is the next level.
func (s *Sim) BeginLevelDone(frames, at, next int32) { s.w.beginLevelDone(frames, at, next) }

// StartLevel starts a level at frame 0, in level sequence slsn (the state
// holds it), with the active players on spawn points.
func (s *Sim) StartLevel(level int32, slsn uint8) {
	s.w.slsn = slsn
	s.w.startLevel(level)
}
