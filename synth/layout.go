package synth

import (
	"fmt"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/schema"
)

// State sizes of the two oldest versions, which tests of those versions
// name.
const (
	LegacyStateSize = 106144
	ModernStateSize = 112384
)

// StateSize returns the size of the game state the generator makes for a
// version, or 0 for VersionUnknown.
func StateSize(v decode.Version) int {
	if i := v.Info(); i != nil && len(i.StateSizes) > 0 {
		return i.StateSizes[0]
	}
	return 0
}

// stateLayout gives the byte offsets of the regions of one era's state and
// the indices of the player fields the world writes. An index of -1 means
// the era has no such region or field. Numbers inside a state are always
// little-endian; fixed is true when the era stores positions as 16.16 fixed
// point instead of float32.
type stateLayout struct {
	size       int
	fixed      bool
	players    int // start of the player array (8 records)
	playerSize int
	ei         int // enemy ints [100][32]
	ef         int // enemy floats or fixed [100][16]
	item       int // item ints [500][16]
	itemf      int // item floats or fixed [500][4]
	lifts      int // lift records [40]
	liftSize   int
	liftFloats int // floats (or fixed) at the start of a lift record
	liftInts   int // ints after them; then a 40-byte name
	tiles      int // level blocks [100][100]
	pshot      int // player shots [50], 24 bytes each
	eshot      int // enemy shots [50]
	events     int // trigger events [1000]
	pf         playerFields
}

// playerFields are field indices (4 bytes each) inside a player record.
type playerFields struct {
	active, control, x, y, xinc, yinc, health, oldHealth, lives int
	shape, color, leftRight, drawRot, drawScale, spawn          int
	up                                                          int // up, down, left, right, jump, fire, fire_held, menu follow in this order
	shotWait, shotsFired, coins, respawns, lateCdats            int
	ldMode, ldTimer, ldFrame, ldNext, slsn                      int
}

// layouts holds the state layout of every version, made at start-up from
// the built-in schema of its state (a name a schema lacks stops the
// program: the generator and the schemas cannot drift apart).
var layouts = func() map[decode.Version]*stateLayout {
	m := map[decode.Version]*stateLayout{}
	for _, v := range decode.Versions() {
		l := versionLayout(v)
		m[v] = &l
	}
	return m
}()

// versionLayout makes the state layout of version v from its schema: the
// regions its view names, and the player fields by their name in that
// version (the legacy state names some of them otherwise).
func versionLayout(v decode.Version) stateLayout {
	sch := schema.ForVersion(v.String(), StateSize(v))
	if sch.View == nil || sch.View.Players == nil || sch.View.Enemies == nil || sch.View.Items == nil || sch.View.Lifts == nil || sch.View.Level == nil {
		panic(fmt.Sprintf("synth: the %s schema of version %s has no full view", sch.Name, v))
	}
	vw := sch.View
	rn := regionNames{
		players: vw.Players.Region, ei: vw.Enemies.Region, ef: vw.Enemies.Pos, item: vw.Items.Region, itemf: vw.Items.Pos,
		lifts: vw.Lifts.Region, tiles: vw.Level.Region,
	}
	if len(vw.Shots) == 2 {
		rn.pshot, rn.eshot = vw.Shots[0], vw.Shots[1]
	}
	if sch.Region("event") != nil {
		rn.events = "event"
	}
	l, f, opt := newStateLayout(sch, rn)
	l.pf = playerFields{
		active: f(vw.Players.Active), control: f("control_method"), x: f(vw.Players.X), y: f(vw.Players.Y), xinc: f("xinc"), yinc: f("yinc"),
		health: f(vw.Players.Health), oldHealth: f("old_health", "old_LIFE"), lives: opt("LIVES"),
		shape: f(vw.Players.Shape), color: f(vw.Players.Color), leftRight: f("left_right"), drawRot: f("draw_rot"), drawScale: f("draw_scale"),
		spawn: f("spawn_point_index"), up: f("up"),
		shotWait: f("shot_wait_counter", "bullet_wait_counter"), shotsFired: f("stat_shots_fired", "stat_bullets_fired"),
		coins: f("stat_purple_coins"), respawns: f("stat_respawns"),
		lateCdats: opt("late_cdats"), ldMode: opt("level_done_mode"), ldTimer: opt("level_done_timer"),
		ldFrame: opt("level_done_frame"), ldNext: opt("level_done_next_level"), slsn: opt("server_lev_seq_num"),
	}
	if i := v.Info(); (i.StateLevelSeq >= 0) != (l.pf.slsn >= 0) || i.StateLevelSeq >= 0 && i.StateLevelSeq != 4*l.pf.slsn {
		panic(fmt.Sprintf("synth: version %s has its level sequence at %d, the %s schema at field %d", v, i.StateLevelSeq, sch.Name, l.pf.slsn))
	}
	return l
}

// regionNames are the schema's names of the regions the generator writes;
// "" for a region the era does not have.
type regionNames struct {
	players, ei, ef, item, itemf, lifts, tiles, pshot, eshot, events string
}

// newStateLayout takes the regions of a state layout from a schema, and
// returns with it the lookups of a player field's index (offset / 4): f,
// the first of the names the schema has (it panics when it has none), and
// opt, -1 when it has none.
func newStateLayout(sch *schema.Schema, rn regionNames) (stateLayout, func(names ...string) int, func(names ...string) int) {
	size := sch.Size
	region := func(name string) *schema.Region {
		r := sch.Region(name)
		if r == nil {
			panic(fmt.Sprintf("synth: the %s schema has no region %q", sch.Name, name))
		}
		return r
	}
	offset := func(name string) int {
		if name == "" {
			return -1
		}
		return region(name).Offset
	}
	players, lifts := region(rn.players), region(rn.lifts)
	l := stateLayout{
		size: size, players: players.Offset, playerSize: players.Elem,
		ei: offset(rn.ei), ef: offset(rn.ef), item: offset(rn.item), itemf: offset(rn.itemf),
		lifts: lifts.Offset, liftSize: lifts.Elem, tiles: offset(rn.tiles),
		pshot: offset(rn.pshot), eshot: offset(rn.eshot), events: offset(rn.events),
	}
	// A lift record: its positions (float32 or fixed), then ints, then the name.
	for _, f := range lifts.Fields {
		switch {
		case f.Type == schema.Fixed16 && l.liftInts == 0:
			l.fixed = true
			l.liftFloats++
		case f.Type == schema.Float32 && l.liftInts == 0:
			l.liftFloats++
		case f.Type == schema.Int32:
			l.liftInts++
		}
	}
	opt := func(names ...string) int {
		for _, name := range names {
			if f := players.Field(name); f != nil && f.Offset%4 == 0 {
				return f.Offset / 4
			}
		}
		return -1
	}
	field := func(names ...string) int {
		i := opt(names...)
		if i < 0 {
			panic(fmt.Sprintf("synth: the %s schema has no 4-byte player field %q", sch.Name, names))
		}
		return i
	}
	return l, field, opt
}

func layoutFor(v decode.Version) *stateLayout { return layouts[v] }
