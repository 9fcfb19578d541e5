package tui

import (
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/levelmap"
)

// mapColor is the xterm-256 color of a block on the map, -1 for the
// terminal's own background.
func mapColor(c levelmap.Cell, changed bool) int {
	if changed {
		return changeColor
	}
	switch c.Thing {
	case levelmap.Player:
		return playerColors[int(c.Color)&15]
	case levelmap.Enemy:
		return enemyColor
	case levelmap.Item:
		return itemColor
	case levelmap.Lift:
		return liftColor
	case levelmap.Shot:
		return shotColor
	}
	if c.Tile == levelmap.Empty {
		return -1
	}
	return tileColors[c.Tile]
}

// The map writes its color sequences itself instead of through lipgloss
// styles: a full map is 5,000 cells whose colors change from cell to cell,
// and a style rendered per cell would build 5,000 strings a frame where
// this writes a sequence only where the colors change. The program's
// renderer still adapts the colors to the terminal (and NO_COLOR draws the
// map in characters instead).

// renderMap draws the part of the map that fits w × h cells: with color,
// two blocks per cell with the upper half block (100 × 50 cells for the
// whole level); without, one character per block as pmdump state --map
// draws them. The view is centred on block (cx, cy) when the level does
// not fit. changed marks blocks to highlight (nil: none).
func renderMap(m *levelmap.Map, changed []bool, w, h, cx, cy int, color bool) []string {
	per := 1
	if color {
		per = 2
	}
	rows := (m.H + per - 1) / per
	x0 := clamp(cx-w/2, 0, max(0, m.W-w))
	y0 := clamp(cy/per-h/2, 0, max(0, rows-h))
	out := make([]string, 0, h)
	var b strings.Builder
	for r := y0; r < y0+h && r < rows; r++ {
		b.Reset()
		prevFg, prevBg := -2, -2
		for x := x0; x < x0+w && x < m.W; x++ {
			ch := func(y int) (levelmap.Cell, bool) {
				if y >= m.H {
					return levelmap.Cell{}, false
				}
				i := y*m.W + x
				return m.Cells[i], changed != nil && changed[i]
			}
			if !color {
				c, chg := ch(r)
				if chg && c.Thing == levelmap.Nothing {
					b.WriteByte('+')
				} else {
					b.WriteByte(c.Char())
				}
				continue
			}
			top, tc := ch(2 * r)
			bot, bc := ch(2*r + 1)
			fg, bg := mapColor(top, tc), mapColor(bot, bc)
			if 2*r+1 >= m.H {
				bg = -1
			}
			glyph := "▀"
			switch {
			case fg < 0 && bg < 0:
				glyph = " "
			case fg < 0:
				// only the lower block shows: the lower half block in its color
				glyph, fg, bg = "▄", bg, -1
			}
			if fg != prevFg || bg != prevBg {
				b.WriteString(sgr(fg, bg))
				prevFg, prevBg = fg, bg
			}
			b.WriteString(glyph)
		}
		if color {
			b.WriteString("\x1b[m")
		}
		out = append(out, b.String())
	}
	return out
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// sgr is the escape sequence that sets an xterm-256 foreground and
// background (-1: the terminal's own).
func sgr(fg, bg int) string {
	var b strings.Builder
	b.WriteString("\x1b[")
	if fg < 0 {
		b.WriteString("39")
	} else {
		b.WriteString("38;5;")
		b.WriteString(strconv.Itoa(fg))
	}
	if bg < 0 {
		b.WriteString(";49m")
	} else {
		b.WriteString(";48;5;")
		b.WriteString(strconv.Itoa(bg))
		b.WriteByte('m')
	}
	return b.String()
}
