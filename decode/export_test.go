package decode

import "testing"

func TestPieceFields(t *testing.T) {
	tests := []struct {
		era               Version
		name              string
		seq, count, start int
		ok                bool
	}{
		{Legacy, "stdf", 2, 3, 4, true},
		{Modern, "stdf", 2, 3, 5, true},
		{Modern, "snfo", 1, 2, 3, true},
		{Modern, "sfil", 1, 2, 3, true},
		{Legacy, "sdat", -1, -1, -1, false},
		{Modern, "stak", -1, -1, -1, false},
	}
	for _, tt := range tests {
		l := Lookup(tt.era, []byte(tt.name))
		seq, count, start, ok := l.PieceFields()
		if seq != tt.seq || count != tt.count || start != tt.start || ok != tt.ok {
			t.Errorf("%s %s: PieceFields() = %d, %d, %d, %v; want %d, %d, %d, %v", tt.era, tt.name,
				seq, count, start, ok, tt.seq, tt.count, tt.start, tt.ok)
		}
		if ok && (l.Fields[seq].Name != "seq" || l.Fields[count].Name != "count" || l.Fields[start].Name != "start") {
			t.Errorf("%s %s: indexes name %s, %s, %s", tt.era, tt.name, l.Fields[seq].Name, l.Fields[count].Name, l.Fields[start].Name)
		}
	}
}

// AppendInt is appendInt, for its test.
var AppendInt = appendInt

func TestPieceRolesAllOrNone(t *testing.T) {
	for _, tt := range []struct {
		name   string
		fields []Field
		panics bool
	}{
		{"none", []Field{{Name: "seq", Type: U8}, {Name: "count", Type: U8}}, false},
		{"all", []Field{{Name: "a", Type: U8, Role: RolePieceSeq}, {Name: "b", Type: U8, Role: RolePieceCount}, {Name: "c", Type: I32, Role: RolePieceStart}}, false},
		{"seq only", []Field{{Name: "seq", Type: U8, Role: RolePieceSeq}}, true},
		{"no start", []Field{{Name: "a", Type: U8, Role: RolePieceSeq}, {Name: "b", Type: U8, Role: RolePieceCount}}, true},
	} {
		l := &Layout{Name: "test", Fields: tt.fields}
		panicked := func() (p bool) {
			defer func() { p = recover() != nil }()
			l.finish()
			return false
		}()
		if panicked != tt.panics {
			t.Errorf("%s: finish panicked %v, want %v", tt.name, panicked, tt.panics)
		}
		if !tt.panics {
			if _, _, _, ok := l.PieceFields(); ok != (tt.name == "all") {
				t.Errorf("%s: PieceFields ok = %v", tt.name, ok)
			}
		}
	}
}
