package tui

import (
	"image/color"

	"charm.land/lipgloss/v2"
)

// styles are every style of the program, made in one place for the
// terminal's background (light or dark) and whether color is wanted.
type styles struct {
	color bool

	tab, tabActive, title, header, selected, dim, err, warn, ok, mark, cursor, key lipgloss.Style
}

func newStyles(dark, useColor bool) styles {
	s := styles{color: useColor}
	plain := lipgloss.NewStyle()
	if !useColor {
		s.title, s.header, s.dim, s.err, s.warn, s.ok, s.key = plain, plain, plain, plain, plain, plain, plain
		s.tab = plain.Padding(0, 1)
		// Without color, reverse video still shows what is selected.
		s.tabActive = plain.Reverse(true).Padding(0, 1)
		s.selected = plain.Reverse(true)
		s.mark = plain.Bold(true)
		s.cursor = plain.Reverse(true)
		return s
	}
	ld := lipgloss.LightDark(dark)
	c := func(light, dark string) color.Color { return ld(lipgloss.Color(light), lipgloss.Color(dark)) }
	accent := c("#5a189a", "#c77dff")
	s.tab = plain.Foreground(c("#555555", "#aaaaaa")).Padding(0, 1)
	s.tabActive = plain.Foreground(c("#ffffff", "#000000")).Background(accent).Bold(true).Padding(0, 1)
	s.title = plain.Foreground(accent).Bold(true)
	s.header = plain.Foreground(c("#333333", "#dddddd")).Bold(true).Underline(true)
	s.selected = plain.Background(c("#e0c3fc", "#3c096c")).Foreground(c("#000000", "#ffffff"))
	s.dim = plain.Foreground(c("#777777", "#888888"))
	s.err = plain.Foreground(c("#b00020", "#ff6b6b")).Bold(true)
	s.warn = plain.Foreground(c("#8a5a00", "#ffd166"))
	s.ok = plain.Foreground(c("#1b5e20", "#80ed99"))
	s.mark = plain.Foreground(c("#b00020", "#ff6b6b")).Bold(true)
	s.cursor = plain.Reverse(true)
	s.key = plain.Foreground(accent).Bold(true)
	return s
}

// Map colors, as xterm-256 indices that read on light and dark
// backgrounds alike (the map draws its own cells).
var (
	tileColors = [...]int{0, 238, 246, 180, 137, 166, 94, 136} // by levelmap.Tile
	// playerColors follow the game's palette of player colors (1-15),
	// near enough.
	playerColors = [16]int{15, 129, 160, 27, 34, 226, 208, 51, 201, 46, 21, 196, 93, 214, 39, 231}
	enemyColor   = 203
	itemColor    = 220
	liftColor    = 44
	shotColor    = 231
	changeColor  = 201
)
