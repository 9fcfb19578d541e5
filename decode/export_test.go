package decode

import "testing"

func TestPieceFields(t *testing.T) {
	tests := []struct {
		era               Era
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
