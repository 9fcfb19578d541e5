package gameview

import (
	"bytes"
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/schema"
)

func TestNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{3, "3"}, {-2, "-2"}, {1.5, "1.5"}, {math.NaN(), "NaN"}} {
		if got := Num(c.v); got != c.want {
			t.Errorf("Num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// put writes a float32 field of a modern player.
func put(t *testing.T, s *schema.Schema, st []byte, player int, field string, v float32) {
	r := s.Region("psyn")
	f := r.Field(field)
	if f == nil {
		t.Fatalf("no field %s", field)
	}
	off := r.Offset + player*r.Elem + f.Offset
	if f.Type == schema.Float32 {
		binary.LittleEndian.PutUint32(st[off:], math.Float32bits(v))
	} else {
		binary.LittleEndian.PutUint32(st[off:], uint32(int32(v)))
	}
}

func TestWriteGameAndDiff(t *testing.T) {
	s := schema.For(112384)
	a := make([]byte, s.Size)
	put(t, s, a, 2, "active", 1)
	put(t, s, a, 2, "x", 100)
	put(t, s, a, 2, "y", 45)
	var w bytes.Buffer
	WriteGame(&w, s, a)
	if !strings.Contains(w.String(), "  2       100  45  5,2") {
		t.Errorf("player 2 at (100,45), block 5,2, not shown:\n%s", w.String())
	}
	b := bytes.Clone(a)
	put(t, s, b, 2, "x", 120)
	ch, err := schema.Diff(s, a, b)
	if err != nil {
		t.Fatal(err)
	}
	w.Reset()
	WriteDiff(&w, s, "A", "B", ch)
	for _, want := range []string{"diff A → B", "psyn: 1 changed values", "psyn[2].x 100 → 120", "1 changed values in 1 regions"} {
		if !strings.Contains(w.String(), want) {
			t.Errorf("diff lacks %q:\n%s", want, w.String())
		}
	}
}
