package synth

import (
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/schema"
)

// The generator writes its states by its own offsets; the schema package
// names the bytes of the same layouts. They must agree: every region the
// generator writes starts where the schema's region of that name does, and
// every player field it writes is the schema's field of that name.
func TestLayoutAgreesWithSchema(t *testing.T) {
	legacyLayout, modernLayout := *layoutFor(decode.Legacy), *layoutFor(decode.Modern)
	for _, tt := range []struct {
		era     decode.Version
		regions map[string]int
		fields  map[string]int
	}{
		{decode.Legacy,
			map[string]int{"players": legacyLayout.players, "Ei": legacyLayout.ei, "Efi": legacyLayout.ef, "item": legacyLayout.item,
				"itemf": legacyLayout.itemf, "lifts": legacyLayout.lifts, "l": legacyLayout.tiles},
			map[string]int{"active": legacyLayout.pf.active, "control_method": legacyLayout.pf.control, "PX": legacyLayout.pf.x, "PY": legacyLayout.pf.y,
				"xinc": legacyLayout.pf.xinc, "yinc": legacyLayout.pf.yinc, "LIFE": legacyLayout.pf.health, "old_LIFE": legacyLayout.pf.oldHealth,
				"LIVES": legacyLayout.pf.lives, "shape": legacyLayout.pf.shape, "color": legacyLayout.pf.color, "left_right": legacyLayout.pf.leftRight,
				"draw_rot": legacyLayout.pf.drawRot, "draw_scale": legacyLayout.pf.drawScale, "spawn_point_index": legacyLayout.pf.spawn, "up": legacyLayout.pf.up,
				"bullet_wait_counter": legacyLayout.pf.shotWait, "stat_bullets_fired": legacyLayout.pf.shotsFired, "stat_purple_coins": legacyLayout.pf.coins,
				"stat_respawns": legacyLayout.pf.respawns}},
		{decode.Modern,
			map[string]int{"psyn": modernLayout.players, "Ei": modernLayout.ei, "Ef": modernLayout.ef, "item": modernLayout.item, "itemf": modernLayout.itemf,
				"lifts": modernLayout.lifts, "l": modernLayout.tiles, "pshot": modernLayout.pshot, "eshot": modernLayout.eshot, "event": modernLayout.events},
			map[string]int{"active": modernLayout.pf.active, "control_method": modernLayout.pf.control, "x": modernLayout.pf.x, "y": modernLayout.pf.y,
				"xinc": modernLayout.pf.xinc, "yinc": modernLayout.pf.yinc, "health": modernLayout.pf.health, "old_health": modernLayout.pf.oldHealth,
				"shape": modernLayout.pf.shape, "color": modernLayout.pf.color, "left_right": modernLayout.pf.leftRight, "draw_rot": modernLayout.pf.drawRot,
				"draw_scale": modernLayout.pf.drawScale, "spawn_point_index": modernLayout.pf.spawn, "up": modernLayout.pf.up,
				"shot_wait_counter": modernLayout.pf.shotWait, "stat_shots_fired": modernLayout.pf.shotsFired, "stat_purple_coins": modernLayout.pf.coins,
				"stat_respawns": modernLayout.pf.respawns, "late_cdats": modernLayout.pf.lateCdats, "level_done_mode": modernLayout.pf.ldMode,
				"level_done_timer": modernLayout.pf.ldTimer, "level_done_frame": modernLayout.pf.ldFrame, "level_done_next_level": modernLayout.pf.ldNext,
				"server_lev_seq_num": modernLayout.pf.slsn}},
	} {
		l := layoutFor(tt.era)
		sch := schema.ForVersion(tt.era.String(), l.size)
		if sch.Size != l.size || sch.View == nil {
			t.Fatalf("%v: no built-in schema of %d bytes", tt.era, l.size)
		}
		for name, off := range tt.regions {
			r := sch.Region(name)
			if r == nil || r.Offset != off {
				t.Errorf("%v: region %s at %d in the generator, schema %+v", tt.era, name, off, r)
			}
		}
		players := sch.Regions[0]
		if players.Elem != l.playerSize || sch.Region("lifts").Elem != l.liftSize {
			t.Errorf("%v: player record %d / lift record %d bytes in the generator, %d / %d in the schema", tt.era, l.playerSize, l.liftSize, players.Elem, sch.Region("lifts").Elem)
		}
		for name, i := range tt.fields {
			f := players.Field(name)
			if f == nil || f.Offset != 4*i {
				t.Errorf("%v: player field %s is number %d in the generator, schema %+v", tt.era, name, i, f)
			}
		}
	}
}

// The layouts taken from the schemas are the ones the game's states have:
// the offsets of the regions and records documented for each era.
func TestLayoutOffsets(t *testing.T) {
	for _, tt := range []struct {
		era  decode.Version
		want stateLayout
	}{
		{decode.Legacy, stateLayout{size: 106144, fixed: true, players: 0, playerSize: 208, ei: 1664, ef: 14464, item: 20864, itemf: 52864,
			lifts: 60864, liftSize: 132, liftFloats: 8, liftInts: 15, tiles: 66144, pshot: -1, eshot: -1, events: -1}},
		{decode.Modern, stateLayout{size: 112384, fixed: false, players: 0, playerSize: 288, ei: 2304, ef: 15104, item: 21504, itemf: 53504,
			lifts: 61504, liftSize: 112, liftFloats: 8, liftInts: 10, tiles: 65984, pshot: 105984, eshot: 107184, events: 108384}},
		// The offsets of the game's version notes (protocol-versions.md and
		// the Aug 2024 capture's manifest).
		{decode.MustParseVersion("2024-06"), stateLayout{size: 112480, fixed: false, players: 0, playerSize: 300, ei: 2400, ef: 15200, item: 21600, itemf: 53600,
			lifts: 61600, liftSize: 112, liftFloats: 8, liftInts: 10, tiles: 66080, pshot: 106080, eshot: 107280, events: 108480}},
		{decode.MustParseVersion("2026-07"), stateLayout{size: 113344, fixed: false, players: 0, playerSize: 328, ei: 2624, ef: 15424, item: 21824, itemf: 53824,
			lifts: 61824, liftSize: 128, liftFloats: 8, liftInts: 14, tiles: 66944, pshot: 106944, eshot: 108144, events: 109344}},
	} {
		got := *layoutFor(tt.era)
		got.pf = playerFields{}
		if got != tt.want {
			t.Errorf("%v: layout\n%+v, want\n%+v", tt.era, got, tt.want)
		}
	}
	for _, tt := range []struct {
		era                          decode.Version
		x, health, up, coins, lateIn int
	}{
		{decode.Legacy, 6, 12, 31, 51, -1},
		{decode.Modern, 15, 21, 42, 58, 62},
		{decode.MustParseVersion("2026-07"), 15, 21, 45, 62, 68}, // x at 60, health 84, up 180, coins 248, late_cdats 272
	} {
		pf := layoutFor(tt.era).pf
		if pf.x != tt.x || pf.health != tt.health || pf.up != tt.up || pf.coins != tt.coins || pf.lateCdats != tt.lateIn {
			t.Errorf("%v: player fields %+v", tt.era, pf)
		}
	}
}
