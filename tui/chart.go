package tui

import (
	"math"
	"strings"
)

// Sparklines and bar charts are drawn here rather than with a chart
// library: the one that fits (NimbleMarkets/ntcharts) is built on the v1
// Charm stack (bubbletea v1, lipgloss v1) and does not work with the v2
// one, and a series drawn with the eight block heights is a few lines.

var bars = []rune(" ▁▂▃▄▅▆▇█")

// resample turns a series into w columns: each column is the largest value
// of its share of the series (NaN: no value), so a spike is never lost.
func resample(vals []float64, w int) []float64 {
	out := make([]float64, w)
	for i := range out {
		out[i] = math.NaN()
	}
	if len(vals) == 0 || w <= 0 {
		return out
	}
	for i, v := range vals {
		if math.IsNaN(v) {
			continue
		}
		c := i * w / len(vals)
		if c >= w {
			c = w - 1
		}
		if math.IsNaN(out[c]) || v > out[c] {
			out[c] = v
		}
	}
	// A series shorter than the width repeats each value over its columns.
	if len(vals) < w {
		for c := range out {
			out[c] = vals[c*len(vals)/w]
		}
	}
	return out
}

// column returns the column of position i of n in a chart w wide.
func column(i, n, w int) int {
	if n <= 0 || w <= 0 {
		return -1
	}
	if n < w {
		return i * w / n
	}
	c := i * w / n
	if c >= w {
		c = w - 1
	}
	return c
}

// chart draws a series as h rows of w columns of block characters, scaled
// from 0 to the series' maximum; a column without a value is blank.
func chart(vals []float64, w, h int) []string {
	cols := resample(vals, w)
	top := 0.0
	for _, v := range cols {
		if !math.IsNaN(v) && v > top {
			top = v
		}
	}
	rows := make([]strings.Builder, h)
	for _, v := range cols {
		// eighths of the chart's height this column fills
		fill := 0
		if !math.IsNaN(v) && top > 0 && v > 0 {
			fill = int(math.Ceil(v / top * float64(8*h)))
		}
		for r := 0; r < h; r++ {
			level := fill - 8*(h-1-r)
			switch {
			case math.IsNaN(v) || level <= 0:
				rows[r].WriteRune(' ')
			case level >= 8:
				rows[r].WriteRune(bars[8])
			default:
				rows[r].WriteRune(bars[level])
			}
		}
	}
	out := make([]string, h)
	for r := range rows {
		out[r] = rows[r].String()
	}
	return out
}

// sparkline is a chart one row high.
func sparkline(vals []float64, w int) string { return chart(vals, w, 1)[0] }

// maxOf is the largest value of a series (0 when it has none).
func maxOf(vals []float64) float64 {
	m := 0.0
	for _, v := range vals {
		if !math.IsNaN(v) && v > m {
			m = v
		}
	}
	return m
}
