package synth

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// The world is a small game simulation whose only purpose is to give the
// server a state that evolves the way a real one does: a tile map that stays
// put, players that run and jump according to their controls, enemies and
// lifts that move every frame, items that bob or get picked up, shots, and
// trigger events. It writes itself into the era's state layout after every
// frame, touching only the bytes of things that changed, so consecutive
// states differ in a few hundred bytes, as in the game.

const (
	mapBlocks  = 100 // the level is 100 × 100 blocks
	blockPx    = 20  // of 20 × 20 pixels
	numEnemies = 100
	numItems   = 500
	numLifts   = 40
	numShots   = 50
	numEvents  = 1000
	maxPlayers = 8

	tileSolidMax = 64 // tiles 1..63 are solid; 0 is empty; 160.. are background
)

// Control bits of cdat and sdat moves.
const (
	ctlLeft  = 0x01
	ctlRight = 0x02
	ctlUp    = 0x04
	ctlDown  = 0x08
	ctlJump  = 0x10
	ctlFire  = 0x20
)

type player struct {
	active           bool
	control          int32 // control method: 2 remote client, 3 server local
	color            int32
	spawn            int32
	x, y, xinc, yinc float64
	onGround         bool
	move             byte
	health, oldHP    float64
	shape, lr        int32
	shotWait         int32
	shots, coins     int32
	respawns         int32
	lateCdats        int32
	queue            []timedMove // legacy: moves waiting for their frame
}

type timedMove struct {
	frame int32
	move  byte
}

type enemy struct {
	typ              int32
	x, y, xinc, yinc float64
	anim, mode       int32
	moving, flier    bool
}

type item struct {
	typ, shape int32
	x, y, y0   float64
	bob        bool
	phase      float64
}

type lift struct {
	x, y, w, h     float64
	x1, y1, x2, y2 float64
	speed          float64
	forward        bool
	step, steps    int32
	counter, color int32
	name           string
}

type shot struct {
	active           bool
	owner            int32
	x, y, xinc, yinc float64
	age              int32
}

type world struct {
	lay   *stateLayout
	st    []byte // the current state
	rng   *rand.Rand
	level int32
	slsn  uint8
	frame int32 // frames simulated on this level

	tiles   [mapBlocks][mapBlocks]int32
	players [maxPlayers]player
	enemies []enemy
	items   []item
	lifts   []lift
	pshots  [numShots]shot
	eshots  [numShots]shot

	dirtyItems []int

	// level-done phase (modern era): the level ends at server frame doneAt.
	done     bool
	doneLeft int32
	doneAt   int32
	doneNext int32
}

func newWorld(lay *stateLayout, rng *rand.Rand, level int32) *world {
	w := &world{lay: lay, st: make([]byte, lay.size), rng: rng}
	w.startLevel(level)
	return w
}

// putI32 and putF write a field of the state; putF writes float32 or 16.16
// fixed point as the era does.
func (w *world) putI32(off int, v int32) {
	binary.LittleEndian.PutUint32(w.st[off:], uint32(v))
}

func (w *world) putF(off int, v float64) {
	if w.lay.fixed {
		binary.LittleEndian.PutUint32(w.st[off:], uint32(int32(math.Round(v*65536))))
		return
	}
	binary.LittleEndian.PutUint32(w.st[off:], math.Float32bits(float32(v)))
}

func (w *world) solid(bx, by int) bool {
	if bx < 0 || by < 0 || bx >= mapBlocks || by >= mapBlocks {
		return true
	}
	t := w.tiles[bx][by]
	return t > 0 && t < tileSolidMax
}

func (w *world) solidAt(px, py float64) bool {
	return w.solid(int(math.Floor(px/blockPx)), int(math.Floor(py/blockPx)))
}

// startLevel builds a new level: tile map, enemies, items and lifts, and
// puts the active players on spawn points. The state is rewritten whole.
func (w *world) startLevel(level int32) {
	w.level = level
	w.frame = 0
	w.done = false
	r := w.rng
	clear(w.st)
	for x := range w.tiles {
		clear(w.tiles[x][:])
	}
	// Border walls, a floor of varied blocks, platforms, and some background.
	wall := int32(1 + r.IntN(8))
	for i := 0; i < mapBlocks; i++ {
		w.tiles[i][0], w.tiles[i][mapBlocks-1] = wall, wall
		w.tiles[0][i], w.tiles[mapBlocks-1][i] = wall, wall
	}
	nplat := 40 + r.IntN(20)
	for p := 0; p < nplat; p++ {
		y := 6 + r.IntN(mapBlocks-10)
		x0 := 1 + r.IntN(mapBlocks-12)
		n := 3 + r.IntN(14)
		t := int32(1 + r.IntN(40))
		for x := x0; x < x0+n && x < mapBlocks-1; x++ {
			w.tiles[x][y] = t
			if r.IntN(6) == 0 {
				w.tiles[x][y] = int32(1 + r.IntN(40))
			}
		}
	}
	for i := 0; i < 260+r.IntN(120); i++ {
		x, y := 1+r.IntN(mapBlocks-2), 1+r.IntN(mapBlocks-2)
		if w.tiles[x][y] == 0 {
			w.tiles[x][y] = int32(160 + r.IntN(24))
		}
	}
	// Enemies: about half walk or fly, the rest stand still.
	w.enemies = w.enemies[:0]
	ne := 24 + r.IntN(12)
	for e := 0; e < ne; e++ {
		bx, by := w.openBlock()
		en := enemy{typ: int32(3 + r.IntN(11)), x: float64(bx * blockPx), y: float64(by * blockPx), mode: int32(r.IntN(4))}
		switch r.IntN(12) {
		case 0, 1, 2, 3:
			en.moving = true
			en.xinc = 0.5 + r.Float64()*2
			if r.IntN(2) == 0 {
				en.xinc = -en.xinc
			}
		case 4:
			en.moving, en.flier = true, true
			en.xinc = r.Float64()*3 - 1.5
			en.yinc = r.Float64()*3 - 1.5
		}
		w.enemies = append(w.enemies, en)
	}
	// Items: mostly still, a few bob up and down.
	w.items = w.items[:0]
	ni := 90 + r.IntN(60)
	for i := 0; i < ni; i++ {
		bx, by := w.openBlock()
		it := item{typ: int32(1 + r.IntN(20)), x: float64(bx * blockPx), y: float64(by * blockPx)}
		it.shape = 1000 + it.typ*16 + int32(r.IntN(4))
		it.y0 = it.y
		if r.IntN(10) == 0 {
			it.bob, it.phase = true, r.Float64()*2*math.Pi
		}
		w.items = append(w.items, it)
	}
	// Lifts going back and forth.
	w.lifts = w.lifts[:0]
	nl := 2 + r.IntN(4)
	for l := 0; l < nl; l++ {
		bx, by := w.openBlock()
		lf := lift{x: float64(bx * blockPx), y: float64(by * blockPx), w: 60, h: 20, speed: 0.5 + r.Float64()*1.5,
			steps: int32(2 + r.IntN(3)), color: int32(1 + r.IntN(15)), forward: true}
		lf.x1, lf.y1 = lf.x, lf.y
		lf.x2, lf.y2 = clamp(lf.x+float64(r.IntN(400)-200), 40, 1900), clamp(lf.y+float64(r.IntN(300)-150), 40, 1900)
		lf.name = "lift " + string(rune('A'+l))
		w.lifts = append(w.lifts, lf)
	}
	w.pshots, w.eshots = [numShots]shot{}, [numShots]shot{}
	for p := range w.players {
		if w.players[p].active {
			w.spawnPlayer(p)
		}
	}
	w.writeStatic()
	w.writeDynamic()
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

// openBlock returns an empty block with an empty block above it.
func (w *world) openBlock() (int, int) {
	for {
		x, y := 2+w.rng.IntN(mapBlocks-4), 2+w.rng.IntN(mapBlocks-4)
		if !w.solid(x, y) && !w.solid(x, y-1) {
			return x, y
		}
	}
}

func (w *world) spawnPlayer(p int) {
	pl := &w.players[p]
	pl.x = float64((10 + 11*p) * blockPx)
	pl.y = float64((mapBlocks - 2) * blockPx)
	for w.solidAt(pl.x+10, pl.y+10) && pl.y > blockPx {
		pl.y -= blockPx
	}
	pl.xinc, pl.yinc, pl.onGround = 0, 0, false
	pl.health, pl.oldHP = 100, 100
	pl.spawn = int32(p)
}

// join makes player p active with a color and control method. The state
// shows it from the next step on, so states already sent for the current
// frame stay valid.
func (w *world) join(p int, color, control int32) {
	pl := &w.players[p]
	pl.active, pl.color, pl.control = true, color, control
	w.spawnPlayer(p)
}

// leave makes player p inactive, as the game's init_player does when a
// player quits or is dropped: its record in the state is cleared.
func (w *world) leave(p int) {
	pl := &w.players[p]
	pl.active, pl.control, pl.queue = false, 0, nil
	base := w.lay.players + p*w.lay.playerSize
	for i := 0; i+4 <= w.lay.playerSize; i += 4 {
		w.putI32(base+i, 0)
	}
}

// beginLevelDone starts the level-done phase: the level ends at server
// frame at, and the next level is next.
func (w *world) beginLevelDone(frames, at, next int32) {
	w.done, w.doneLeft, w.doneAt, w.doneNext = true, frames, at, next
}

// step simulates one frame and writes the changes into the state.
func (w *world) step() {
	w.frame++
	r := w.rng
	for p := range w.players {
		pl := &w.players[p]
		if !pl.active {
			continue
		}
		for len(pl.queue) > 0 && pl.queue[0].frame <= w.frame {
			pl.move = pl.queue[0].move
			pl.queue = pl.queue[1:]
		}
		if !w.done {
			w.movePlayer(p)
		}
	}
	for e := range w.enemies {
		en := &w.enemies[e]
		en.anim++
		if !en.moving {
			continue
		}
		nx := en.x + en.xinc
		if nx < blockPx || nx > float64((mapBlocks-2)*blockPx) || w.solidAt(nx+10+math.Copysign(10, en.xinc), en.y+10) {
			en.xinc = -en.xinc
		} else {
			en.x = nx
		}
		if en.flier {
			ny := en.y + en.yinc
			if ny < blockPx || ny > float64((mapBlocks-2)*blockPx) || w.solidAt(en.x+10, ny+10+math.Copysign(10, en.yinc)) {
				en.yinc = -en.yinc
			} else {
				en.y = ny
			}
		}
		if w.lay.eshot >= 0 && r.IntN(400) == 0 {
			w.fire(&w.eshots, int32(e), en.x, en.y, math.Copysign(5, en.xinc))
		}
	}
	for i := range w.items {
		it := &w.items[i]
		if it.bob && it.typ != 0 {
			it.phase += 0.15
			it.y = it.y0 + 3*math.Sin(it.phase)
			w.dirtyItems = append(w.dirtyItems, i)
		}
	}
	for l := range w.lifts {
		lf := &w.lifts[l]
		tx, ty := lf.x2, lf.y2
		if !lf.forward {
			tx, ty = lf.x1, lf.y1
		}
		dx, dy := tx-lf.x, ty-lf.y
		d := math.Hypot(dx, dy)
		lf.counter++
		if d <= lf.speed {
			lf.x, lf.y, lf.forward, lf.counter = tx, ty, !lf.forward, 0
			lf.step = (lf.step + 1) % lf.steps
		} else {
			lf.x += dx / d * lf.speed
			lf.y += dy / d * lf.speed
		}
	}
	w.moveShots(&w.pshots)
	w.moveShots(&w.eshots)
	if w.lay.events >= 0 && r.IntN(120) == 0 {
		e := r.IntN(numEvents)
		off := w.lay.events + 4*e
		w.putI32(off, 1-int32(binary.LittleEndian.Uint32(w.st[off:])))
	}
	if w.done && w.doneLeft > 0 {
		w.doneLeft--
	}
	w.writeDynamic()
}

func (w *world) movePlayer(p int) {
	pl := &w.players[p]
	m := pl.move
	target := 0.0
	if m&ctlLeft != 0 {
		target -= 4
		pl.lr = 0
	}
	if m&ctlRight != 0 {
		target += 4
		pl.lr = 1
	}
	switch d := target - pl.xinc; {
	case d > 0.75:
		pl.xinc += 0.75
	case d < -0.75:
		pl.xinc -= 0.75
	default:
		pl.xinc = target
	}
	if pl.xinc != 0 {
		nx := pl.x + pl.xinc
		edge := nx
		if pl.xinc > 0 {
			edge = nx + blockPx - 1
		}
		if w.solidAt(edge, pl.y+blockPx/2) {
			pl.xinc = 0
		} else {
			pl.x = nx
		}
	}
	if m&ctlJump != 0 && pl.onGround {
		pl.yinc = -8
	}
	pl.yinc = math.Min(pl.yinc+0.6, 8)
	ny := pl.y + pl.yinc
	switch {
	case pl.yinc > 0 && w.solidAt(pl.x+blockPx/2, ny+blockPx):
		pl.y = math.Floor((ny+blockPx)/blockPx)*blockPx - blockPx
		pl.yinc, pl.onGround = 0, true
	case pl.yinc < 0 && w.solidAt(pl.x+blockPx/2, ny):
		pl.yinc = 0
	default:
		pl.y, pl.onGround = ny, false
	}
	if pl.xinc != 0 || !pl.onGround {
		pl.shape = (pl.shape + 1) % 24
	}
	if pl.shotWait > 0 {
		pl.shotWait--
	}
	if m&ctlFire != 0 && pl.shotWait == 0 {
		xinc := -8.0
		if pl.lr == 1 {
			xinc = 8
		}
		if w.fire(&w.pshots, int32(p), pl.x, pl.y+6, xinc) {
			pl.shots++
			pl.shotWait = 6
		}
	}
	// Touching an enemy hurts; running into a small item picks it up.
	pl.oldHP = pl.health
	for e := range w.enemies {
		en := &w.enemies[e]
		if math.Abs(en.x-pl.x) < 14 && math.Abs(en.y-pl.y) < 14 {
			pl.health -= 2
		}
	}
	if pl.health < 10 {
		w.spawnPlayer(p)
		pl.respawns++
	}
	for i := range w.items {
		it := &w.items[i]
		if it.typ != 0 && it.typ < 6 && math.Abs(it.x-pl.x) < 12 && math.Abs(it.y-pl.y) < 12 {
			it.typ, it.shape = 0, 0
			pl.coins++
			w.dirtyItems = append(w.dirtyItems, i)
		}
	}
}

func (w *world) fire(shots *[numShots]shot, owner int32, x, y, xinc float64) bool {
	for i := range shots {
		if !shots[i].active {
			shots[i] = shot{active: true, owner: owner, x: x, y: y, xinc: xinc}
			return true
		}
	}
	return false
}

func (w *world) moveShots(shots *[numShots]shot) {
	for i := range shots {
		s := &shots[i]
		if !s.active {
			continue
		}
		s.x += s.xinc
		s.y += s.yinc
		s.age++
		if s.age > 60 || w.solidAt(s.x+2, s.y+2) {
			*s = shot{}
		}
	}
}
