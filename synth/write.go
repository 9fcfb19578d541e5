package synth

import "math"

// writeStatic writes what changes only at a level start: tiles, every item,
// lift names and sizes.
func (w *world) writeStatic() {
	l := w.lay
	for x := 0; x < mapBlocks; x++ {
		for y := 0; y < mapBlocks; y++ {
			if t := w.tiles[x][y]; t != 0 {
				w.putI32(l.tiles+4*(x*mapBlocks+y), t)
			}
		}
	}
	for i := range w.items {
		w.writeItem(i)
	}
	for n := range w.lifts {
		lf := &w.lifts[n]
		off := l.lifts + n*l.liftSize
		w.putF(off+16, lf.w)
		w.putF(off+20, lf.h)
		copy(w.st[off+4*(l.liftFloats+l.liftInts):off+l.liftSize], lf.name)
	}
}

func (w *world) writeItem(i int) {
	l := w.lay
	it := &w.items[i]
	off := l.item + i*64
	w.putI32(off, it.typ)
	w.putI32(off+4, it.shape)
	if it.typ != 0 {
		w.putI32(off+8, 1)
	} else {
		w.putI32(off+8, 0)
	}
	off = l.itemf + i*16
	w.putF(off, it.x)
	w.putF(off+4, it.y)
}

// writeDynamic writes everything that may change from frame to frame.
func (w *world) writeDynamic() {
	l := w.lay
	for p := range w.players {
		if w.players[p].active {
			w.writePlayer(p)
		}
	}
	for e := range w.enemies {
		en := &w.enemies[e]
		off := l.ei + e*32*4
		w.putI32(off, en.typ)
		w.putI32(off+4, 1)
		w.putI32(off+8, en.mode)
		w.putI32(off+12, en.anim/4%8)
		off = l.ef + e*16*4
		w.putF(off, en.x)
		w.putF(off+4, en.y)
		w.putF(off+8, en.xinc)
		w.putF(off+12, en.yinc)
		w.putF(off+16, 1)
	}
	for _, i := range w.dirtyItems {
		w.writeItem(i)
	}
	w.dirtyItems = w.dirtyItems[:0]
	for n := range w.lifts {
		lf := &w.lifts[n]
		off := l.lifts + n*l.liftSize
		w.putF(off, lf.x)
		w.putF(off+4, lf.y)
		xinc, yinc := 0.0, 0.0
		if d := math.Hypot(lf.x2-lf.x1, lf.y2-lf.y1); d > 0 {
			xinc, yinc = (lf.x2-lf.x1)/d*lf.speed, (lf.y2-lf.y1)/d*lf.speed
			if !lf.forward {
				xinc, yinc = -xinc, -yinc
			}
		}
		w.putF(off+8, xinc)
		w.putF(off+12, yinc)
		ints := off + 4*l.liftFloats
		if l.fixed {
			// legacy: x1, y1, x2, y2, width, height, flags, mode, val1, val2,
			// color, current_step, num_steps, limit_counter, limit_type
			w.putI32(ints, int32(lf.x))
			w.putI32(ints+4, int32(lf.y))
			w.putI32(ints+8, int32(lf.x+lf.w))
			w.putI32(ints+12, int32(lf.y+lf.h))
			w.putI32(ints+16, int32(lf.w))
			w.putI32(ints+20, int32(lf.h))
			w.putI32(ints+40, lf.color)
			w.putI32(ints+44, lf.step)
			w.putI32(ints+48, lf.steps)
			w.putI32(ints+52, lf.counter)
		} else {
			// modern: active, flags, mode, val1, val2, color, current_step,
			// num_steps, limit_counter, limit_type
			w.putI32(ints, 1)
			w.putI32(ints+20, lf.color)
			w.putI32(ints+24, lf.step)
			w.putI32(ints+28, lf.steps)
			w.putI32(ints+32, lf.counter)
		}
	}
	if l.pshot >= 0 {
		w.writeShots(l.pshot, &w.pshots)
		w.writeShots(l.eshot, &w.eshots)
	}
}

func (w *world) writeShots(base int, shots *[numShots]shot) {
	for i := range shots {
		s := &shots[i]
		off := base + 24*i
		if !s.active {
			if w.st[off] != 0 {
				clear(w.st[off : off+24])
			}
			continue
		}
		w.putI32(off, 1)
		w.putI32(off+4, s.owner)
		w.putF(off+8, s.x)
		w.putF(off+12, s.y)
		w.putF(off+16, s.xinc)
		w.putF(off+20, s.yinc)
	}
}

func (w *world) writePlayer(p int) {
	l := w.lay
	f := &l.pf
	pl := &w.players[p]
	base := l.players + p*l.playerSize
	i32 := func(field int, v int32) {
		if field >= 0 {
			w.putI32(base+4*field, v)
		}
	}
	flt := func(field int, v float64) {
		if field >= 0 {
			w.putF(base+4*field, v)
		}
	}
	i32(f.active, 1)
	i32(f.control, pl.control)
	i32(f.spawn, pl.spawn)
	flt(f.x, pl.x)
	flt(f.y, pl.y)
	flt(f.xinc, pl.xinc)
	flt(f.yinc, pl.yinc)
	flt(f.health, pl.health)
	flt(f.oldHealth, pl.oldHP)
	i32(f.lives, 3)
	i32(f.shape, pl.shape)
	i32(f.color, pl.color)
	i32(f.leftRight, pl.lr)
	flt(f.drawScale, 1)
	for b := 0; b < 6; b++ {
		// up, down, left, right, jump, fire from the control bits
		bit := [6]byte{ctlUp, ctlDown, ctlLeft, ctlRight, ctlJump, ctlFire}[b]
		var v int32
		if pl.move&bit != 0 {
			v = 1
		}
		i32(f.up+b, v)
	}
	i32(f.shotWait, pl.shotWait)
	i32(f.shotsFired, pl.shots)
	i32(f.coins, pl.coins)
	i32(f.respawns, pl.respawns)
	i32(f.lateCdats, pl.lateCdats)
	if w.done {
		i32(f.ldMode, 2)
		i32(f.ldTimer, w.doneLeft)
		i32(f.ldFrame, w.doneAt)
		i32(f.ldNext, w.doneNext)
	}
	if p == 0 {
		i32(f.slsn, int32(w.slsn))
	}
}
