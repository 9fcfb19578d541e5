package levelmap

import (
	"testing"

	"github.com/pmdump/pmdump/schema"
)

func TestChanged(t *testing.T) {
	s := schema.For(112384) // modern: level l, players psyn, enemies Ei/Ef, items item/itemf
	// A 100 × 100 map with player 3 at block (1, 1), enemy 7 at (10, 20),
	// item 2 at (30, 40) and an actor off the map.
	m := &Map{W: 100, H: 100, Cells: make([]Cell, 100*100), Block: 20, Actors: []Actor{
		{Thing: Player, Index: 3, X: 1, Y: 1},
		{Thing: Enemy, Index: 7, X: 10, Y: 20},
		{Thing: Item, Index: 2, X: 30, Y: 40},
		{Thing: Enemy, Index: 8, X: -1, Y: -1},
	}}
	type xy struct{ x, y int }
	for _, c := range []struct {
		name string
		ch   []schema.Change
		want []xy
	}{
		{"no change", nil, nil},
		{"a level block", []schema.Change{{Region: "l", Index: []int{2, 1}}}, []xy{{2, 1}}},
		{"a level block off the map", []schema.Change{{Region: "l", Index: []int{100, 1}}}, nil},
		{"the player's record", []schema.Change{{Region: "psyn", Index: []int{3}, Field: "x"}}, []xy{{1, 1}}},
		{"a player not on the map", []schema.Change{{Region: "psyn", Index: []int{4}, Field: "x"}}, nil},
		{"an enemy's ints", []schema.Change{{Region: "Ei", Index: []int{7, 0}}}, []xy{{10, 20}}},
		{"an enemy's position", []schema.Change{{Region: "Ef", Index: []int{7, 1}}}, []xy{{10, 20}}},
		{"an enemy off the map", []schema.Change{{Region: "Ef", Index: []int{8, 1}}}, nil},
		{"an item's position", []schema.Change{{Region: "itemf", Index: []int{2, 0}}}, []xy{{30, 40}}},
		{"an item index that is an enemy's", []schema.Change{{Region: "item", Index: []int{7, 0}}}, nil},
		{"another region", []schema.Change{{Region: "lifts", Index: []int{3}, Field: "x"}}, nil},
		{"several", []schema.Change{
			{Region: "l", Index: []int{99, 99}},
			{Region: "psyn", Index: []int{3}, Field: "y"},
			{Region: "Ei", Index: []int{7, 3}},
		}, []xy{{99, 99}, {1, 1}, {10, 20}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			marks := m.Changed(nil, s, c.ch)
			if len(marks) != len(m.Cells) {
				t.Fatalf("%d marks for %d cells", len(marks), len(m.Cells))
			}
			want := map[xy]bool{}
			for _, b := range c.want {
				want[b] = true
			}
			for i, got := range marks {
				b := xy{i % m.W, i / m.W}
				if got != want[b] {
					t.Errorf("block %v marked %v, want %v", b, got, want[b])
				}
			}
		})
	}
	// Marks add up over several diffs; a schema without a level marks
	// nothing.
	marks := m.Changed(nil, s, []schema.Change{{Region: "l", Index: []int{5, 6}}})
	marks = m.Changed(marks, s, []schema.Change{{Region: "l", Index: []int{7, 8}}})
	if !marks[6*100+5] || !marks[8*100+7] {
		t.Error("a second diff cleared the first's marks")
	}
	if got := m.Changed(nil, &schema.Schema{}, []schema.Change{{Region: "l", Index: []int{5, 6}}}); got != nil {
		t.Errorf("a schema without a level: %d marks", len(got))
	}
}
