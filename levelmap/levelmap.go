// Package levelmap draws the level of a game state as a map of its blocks:
// the level's tiles told apart by what they do (solid, semi-solid,
// breakable, bombable, ladder, rope, background), with the players,
// enemies, items, lifts and shots of the state over them. It reads the
// state through its schema's view, so it knows nothing of byte offsets.
//
// Text is the plain form (one character per block, pmdump state --map);
// a front end colors the map from Cells.
package levelmap

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/pmdump/pmdump/schema"
)

// Tile is what a block of the level is, by its tile's flags.
type Tile uint8

// The kinds of tile. A block's value is a tile number (its low bits, as
// many as the schema's tile mask says: 10 up to June 2026, 11 from July
// 2026) and flags; the kind follows the flags as the game's level editor names
// them (a later kind wins when several flags are set).
const (
	Empty      Tile = iota // value 0: nothing there
	Background             // a tile with none of the flags below: scenery
	Solid                  // solid for players
	SemiSolid              // solid from above only
	Breakable              // shots break it
	Bombable               // bombs break it
	Ladder
	Rope
)

// The tile flags of the game (PM_BTILE_*) that decide a Tile.
const (
	flagSolidPlayer     = 1 << 16
	flagSemiSolidPlayer = 1 << 21
	flagBombable        = 1 << 24
	flagBreakablePShot  = 1 << 25
	flagLadder          = 1 << 27
	flagRope            = 1 << 28
)

// tileFlags are the flags that decide a Tile, in the order they count:
// a later one wins.
var tileFlags = [...]struct {
	flag int32
	tile Tile
}{
	{flagSolidPlayer, Solid},
	{flagSemiSolidPlayer, SemiSolid},
	{flagBreakablePShot, Breakable},
	{flagBombable, Bombable},
	{flagLadder, Ladder},
	{flagRope, Rope},
}

// TileOf returns the kind of a block's value.
func TileOf(v int32) Tile {
	if v == 0 {
		return Empty
	}
	t := Background
	for _, f := range tileFlags {
		if v&f.flag != 0 {
			t = f.tile
		}
	}
	return t
}

// Thing is what is drawn over a block.
type Thing uint8

// The things, in the order they are drawn: a later one covers an earlier
// one on the same block.
const (
	Nothing Thing = iota
	Lift
	Item
	Enemy
	Shot
	Player
)

// Cell is one block of the map.
type Cell struct {
	Tile   Tile
	Number int16 // the tile's number (the block's value under the schema's tile mask): which picture the game draws
	Thing  Thing
	Player int8 // the player number when Thing is Player
	Color  int8 // the player's color (the game's palette index)
}

// Actor is a player, enemy, item, lift or shot placed on the map.
type Actor struct {
	Thing  Thing
	Index  int     // its slot in its region
	X, Y   int     // block
	PX, PY float64 // pixels
	Color  int     // players: the game's color number
}

// Map is a level with what is on it.
type Map struct {
	W, H   int    // blocks across and down (100 × 100)
	Cells  []Cell // row by row from the top: Cells[y*W+x]
	Actors []Actor
	Block  int // pixels per block
}

// defaultTileMask is the tile mask of a schema that gives none: the low 10
// bits, as the game had before July 2026.
const defaultTileMask = 1<<10 - 1

// ErrNoLevel is returned for a state whose schema names no level region.
var ErrNoLevel = errors.New("the schema names no level blocks")

// Read makes the map of a state by its schema: the level region l[x][y]
// (x across, y down) and the view's players, enemies, items, lifts and
// shots.
func Read(s *schema.Schema, st []byte) (*Map, error) {
	if s == nil || s.View == nil || s.View.Level == nil {
		return nil, ErrNoLevel
	}
	if len(st) < s.Size {
		return nil, fmt.Errorf("state of %d bytes is shorter than its schema's %d", len(st), s.Size)
	}
	lr := s.Region(s.View.Level.Region)
	if lr == nil || len(lr.Dims) != 2 || lr.Fields != nil {
		return nil, fmt.Errorf("level region %q: want a two-dimensional array of numbers", s.View.Level.Region)
	}
	m := &Map{W: lr.Dims[0], H: lr.Dims[1], Block: s.View.Level.Block}
	if m.Block <= 0 {
		m.Block = 20
	}
	mask := int32(s.View.Level.TileMask)
	if mask <= 0 {
		mask = defaultTileMask
	}
	m.Cells = make([]Cell, m.W*m.H)
	for x := 0; x < m.W; x++ {
		for y := 0; y < m.H; y++ {
			v, _ := schema.Value(st, lr.Offset+(x*m.H+y)*lr.Elem, lr.Type, lr.Elem)
			c := &m.Cells[y*m.W+x]
			c.Tile = TileOf(int32(v))
			c.Number = int16(int32(v) & mask)
		}
	}
	v := s.View
	if l := v.Lifts; l != nil {
		if r := s.Region(l.Region); r != nil {
			wf, hf := "w", "h"
			if r.Field(wf) == nil {
				wf, hf = "fw", "fh"
			}
			for i := 0; i < r.Count(); i++ {
				x, _ := s.Get(st, l.Region, i, l.X)
				y, _ := s.Get(st, l.Region, i, l.Y)
				active := x != 0 || y != 0
				if l.Active != "" {
					a, _ := s.Get(st, l.Region, i, l.Active)
					active = a != 0
				}
				if !active {
					continue
				}
				w, _ := s.Get(st, l.Region, i, wf)
				h, _ := s.Get(st, l.Region, i, hf)
				m.place(Actor{Thing: Lift, Index: i, PX: x, PY: y}, w, h)
			}
		}
	}
	things := func(t *schema.Things, what Thing) {
		if t == nil {
			return
		}
		r := s.Region(t.Region)
		if r == nil || len(r.Dims) == 0 {
			return
		}
		rows := r.Count() / r.Dims[len(r.Dims)-1]
		for i := 0; i < rows; i++ {
			if typ, _ := s.GetLabel(st, t.Region, i, t.Type); typ == 0 {
				continue
			}
			x, _ := s.GetLabel(st, t.Pos, i, "x")
			y, _ := s.GetLabel(st, t.Pos, i, "y")
			m.place(Actor{Thing: what, Index: i, PX: x, PY: y}, 0, 0)
		}
	}
	things(v.Items, Item)
	things(v.Enemies, Enemy)
	for _, name := range v.Shots {
		r := s.Region(name)
		if r == nil || r.Field("active") == nil {
			continue
		}
		for i := 0; i < r.Count(); i++ {
			if a, _ := s.Get(st, name, i, "active"); a == 0 {
				continue
			}
			x, _ := s.Get(st, name, i, "x")
			y, _ := s.Get(st, name, i, "y")
			m.place(Actor{Thing: Shot, Index: i, PX: x, PY: y}, 0, 0)
		}
	}
	if p := v.Players; p != nil {
		if r := s.Region(p.Region); r != nil {
			for i := 0; i < r.Count(); i++ {
				if a, _ := s.Get(st, p.Region, i, p.Active); a == 0 {
					continue
				}
				x, _ := s.Get(st, p.Region, i, p.X)
				y, _ := s.Get(st, p.Region, i, p.Y)
				c, _ := s.Get(st, p.Region, i, p.Color)
				m.place(Actor{Thing: Player, Index: i, PX: x, PY: y, Color: int(c)}, 0, 0)
			}
		}
	}
	return m, nil
}

// place adds an actor at pixel position (a.PX, a.PY), covering the blocks
// of a w × h pixel box (one block when w and h are 0). Actors off the map
// (or at positions that are not numbers) are listed but not drawn.
func (m *Map) place(a Actor, w, h float64) {
	if math.IsNaN(a.PX) || math.IsNaN(a.PY) || math.IsInf(a.PX, 0) || math.IsInf(a.PY, 0) {
		a.X, a.Y = -1, -1
		m.Actors = append(m.Actors, a)
		return
	}
	b := float64(m.Block)
	a.X, a.Y = int(math.Floor(a.PX/b)), int(math.Floor(a.PY/b))
	m.Actors = append(m.Actors, a)
	x1, y1 := a.X, a.Y
	if w > 0 && h > 0 && w < 1e5 && h < 1e5 {
		x1 = int(math.Floor((a.PX + w - 1) / b))
		y1 = int(math.Floor((a.PY + h - 1) / b))
	}
	for y := a.Y; y <= y1; y++ {
		for x := a.X; x <= x1; x++ {
			if x < 0 || y < 0 || x >= m.W || y >= m.H {
				continue
			}
			c := &m.Cells[y*m.W+x]
			if a.Thing >= c.Thing {
				c.Thing = a.Thing
				if a.Thing == Player {
					c.Player = int8(a.Index)
					c.Color = int8(a.Color)
				}
			}
		}
	}
}

// Cell returns the cell of block (x, y).
func (m *Map) Cell(x, y int) Cell { return m.Cells[y*m.W+x] }

// tileChars are the characters of the tiles in Text.
var tileChars = [...]byte{Empty: ' ', Background: '.', Solid: '#', SemiSolid: '=', Breakable: '%', Bombable: '!', Ladder: 'H', Rope: '~'}

// thingChars are the characters of the things in Text (players are their
// number).
var thingChars = [...]byte{Lift: 'L', Item: 'i', Enemy: 'E', Shot: '*'}

// Char is the character of a cell in Text.
func (c Cell) Char() byte {
	switch c.Thing {
	case Nothing:
		return tileChars[c.Tile]
	case Player:
		return '0' + byte(c.Player)
	}
	return thingChars[c.Thing]
}

// Text draws the map as H lines of W characters, each ending in a newline:
// row y from the top, column x from the left, one character per block.
func (m *Map) Text() []byte {
	b := make([]byte, 0, (m.W+1)*m.H)
	for y := 0; y < m.H; y++ {
		for x := 0; x < m.W; x++ {
			b = append(b, m.Cells[y*m.W+x].Char())
		}
		b = append(b, '\n')
	}
	return b
}

// Legend explains the characters of Text, one line per kind.
func Legend() string {
	var b strings.Builder
	b.WriteString("legend: ' ' empty (tile 0)  '.' background  '#' solid  '=' semi-solid  '%' breakable  '!' bombable\n")
	b.WriteString("        'H' ladder  '~' rope  '0'-'7' player  'E' enemy  'i' item  'L' lift  '*' shot\n")
	return b.String()
}

// String is the tile kind as a word.
func (t Tile) String() string {
	switch t {
	case Empty:
		return "empty"
	case Background:
		return "background"
	case Solid:
		return "solid"
	case SemiSolid:
		return "semi-solid"
	case Breakable:
		return "breakable"
	case Bombable:
		return "bombable"
	case Ladder:
		return "ladder"
	case Rope:
		return "rope"
	}
	return fmt.Sprintf("tile(%d)", uint8(t))
}
