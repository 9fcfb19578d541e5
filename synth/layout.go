package synth

import "github.com/pmdump/pmdump/decode"

// State sizes the generator uses: the legacy size of December 2022 and the
// modern size of late 2023 to early 2024.
const (
	LegacyStateSize = 106144
	ModernStateSize = 112384
)

// StateSize returns the size of the game state the generator makes for an
// era, or 0 for an era it does not know.
func StateSize(era decode.Era) int {
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
// fixed), item, itemf (fixed), lifts of 132 bytes, the tile map.
var legacyLayout = stateLayout{
	size: LegacyStateSize, fixed: true,
	players: 0, playerSize: 208,
	ei: 1664, ef: 14464, item: 20864, itemf: 52864,
	lifts: 60864, liftSize: 132, liftFloats: 8, liftInts: 15,
	tiles: 66144, pshot: -1, eshot: -1, events: -1,
	pf: playerFields{
		active: 0, spawn: 5, x: 6, y: 7, xinc: 8, yinc: 9, health: 12, oldHealth: 13, lives: 14,
		shape: 16, color: 17, drawRot: 21, drawScale: 22, leftRight: 28, up: 31,
		shotWait: 39, control: 45, respawns: 46, shotsFired: 47, coins: 51,
		lateCdats: -1, ldMode: -1, ldTimer: -1, ldFrame: -1, ldNext: -1, slsn: -1,
	},
}

// The modern state (112384 bytes): psyn[8] of 72 fields, Ei, Ef, item,
// itemf, lifts of 112 bytes, the tile map, player and enemy shots, events.
var modernLayout = stateLayout{
	size: ModernStateSize, fixed: false,
	players: 0, playerSize: 288,
	ei: 2304, ef: 15104, item: 21504, itemf: 53504,
	lifts: 61504, liftSize: 112, liftFloats: 8, liftInts: 10,
	tiles: 65984, pshot: 105984, eshot: 107184, events: 108384,
	pf: playerFields{
		active: 0, control: 1, ldMode: 6, ldTimer: 7, ldFrame: 12, ldNext: 13,
		x: 15, y: 16, xinc: 17, yinc: 18, health: 21, oldHealth: 22,
		shape: 27, color: 28, leftRight: 29, drawRot: 30, drawScale: 31, spawn: 41,
		up: 42, shotWait: 50, respawns: 53, shotsFired: 54, coins: 58, lateCdats: 62, slsn: 70,
		lives: -1,
	},
}

func layoutFor(era decode.Era) *stateLayout {
	if era == decode.Legacy {
		return &legacyLayout
	}
	return &modernLayout
}
