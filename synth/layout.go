package synth

import (
	"fmt"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/schema"
)

// State sizes the generator uses: the legacy size of December 2022 and the
// modern size of late 2023 to early 2024.
const (
	LegacyStateSize = 106144
	ModernStateSize = 112384
)

// StateSize returns the size of the game state the generator makes for an
// era, or 0 for an era it does not know.
func StateSize(era decode.Version) int {
	switch era {
	case decode.Legacy:
		return LegacyStateSize
	case decode.Modern:
		return ModernStateSize
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

// The legacy state (106144 bytes): players[8] of 52 fields, Ei, Efi (16.16
// fixed), item, itemf (fixed), lifts of 132 bytes, the tile map. Offsets
// come from the built-in schema of that size.
var legacyLayout = func() stateLayout {
	l, f := newStateLayout(LegacyStateSize, regionNames{
		players: "players", ei: "Ei", ef: "Efi", item: "item", itemf: "itemf", lifts: "lifts", tiles: "l",
	})
	l.pf = playerFields{
		active: f("active"), control: f("control_method"), x: f("PX"), y: f("PY"), xinc: f("xinc"), yinc: f("yinc"),
		health: f("LIFE"), oldHealth: f("old_LIFE"), lives: f("LIVES"),
		shape: f("shape"), color: f("color"), leftRight: f("left_right"), drawRot: f("draw_rot"), drawScale: f("draw_scale"),
		spawn: f("spawn_point_index"), up: f("up"),
		shotWait: f("bullet_wait_counter"), shotsFired: f("stat_bullets_fired"), coins: f("stat_purple_coins"), respawns: f("stat_respawns"),
		lateCdats: -1, ldMode: -1, ldTimer: -1, ldFrame: -1, ldNext: -1, slsn: -1,
	}
	return l
}()

// The modern state (112384 bytes): psyn[8] of 72 fields, Ei, Ef, item,
// itemf, lifts of 112 bytes, the tile map, player and enemy shots, events.
// Offsets come from the built-in schema of that size.
var modernLayout = func() stateLayout {
	l, f := newStateLayout(ModernStateSize, regionNames{
		players: "psyn", ei: "Ei", ef: "Ef", item: "item", itemf: "itemf", lifts: "lifts", tiles: "l",
		pshot: "pshot", eshot: "eshot", events: "event",
	})
	l.pf = playerFields{
		active: f("active"), control: f("control_method"), x: f("x"), y: f("y"), xinc: f("xinc"), yinc: f("yinc"),
		health: f("health"), oldHealth: f("old_health"),
		shape: f("shape"), color: f("color"), leftRight: f("left_right"), drawRot: f("draw_rot"), drawScale: f("draw_scale"),
		spawn: f("spawn_point_index"), up: f("up"),
		shotWait: f("shot_wait_counter"), shotsFired: f("stat_shots_fired"), coins: f("stat_purple_coins"), respawns: f("stat_respawns"),
		lateCdats: f("late_cdats"), ldMode: f("level_done_mode"), ldTimer: f("level_done_timer"),
		ldFrame: f("level_done_frame"), ldNext: f("level_done_next_level"), slsn: f("server_lev_seq_num"),
		lives: -1,
	}
	return l
}()

// regionNames are the schema's names of the regions the generator writes;
// "" for a region the era does not have.
type regionNames struct {
	players, ei, ef, item, itemf, lifts, tiles, pshot, eshot, events string
}

// newStateLayout takes the regions of a state layout from the built-in
// schema of that size, and returns with it the lookup of a player field's
// index (offset / 4). A name the schema does not have stops the program at
// start-up: the generator and the schema cannot drift apart.
func newStateLayout(size int, rn regionNames) (stateLayout, func(name string) int) {
	sch := schema.For(size)
	if sch.Size != size || sch.View == nil {
		panic(fmt.Sprintf("synth: no built-in schema of a %d-byte state", size))
	}
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
	field := func(name string) int {
		f := players.Field(name)
		if f == nil || f.Offset%4 != 0 {
			panic(fmt.Sprintf("synth: the %s schema has no 4-byte player field %q", sch.Name, name))
		}
		return f.Offset / 4
	}
	return l, field
}

func layoutFor(era decode.Version) *stateLayout {
	if era == decode.Legacy {
		return &legacyLayout
	}
	return &modernLayout
}
