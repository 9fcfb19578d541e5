package packetfmt

import (
	"testing"
	"time"
)

func TestAppendPad(t *testing.T) {
	for _, c := range []struct {
		n     int64
		width int
		want  string
	}{
		{7, 6, "     7"},
		{123456, 6, "123456"},
		{1234567, 6, "1234567"},
		{-12, 4, " -12"},
		{0, 1, "0"},
	} {
		if got := string(AppendPad(nil, c.n, c.width)); got != c.want {
			t.Errorf("AppendPad(%d, %d) = %q, want %q", c.n, c.width, got, c.want)
		}
	}
}

func TestAppendNameAndHex(t *testing.T) {
	if got := string(AppendName(nil, []byte{'s', 't', 0x01, 'f'})); got != `st\x01f` {
		t.Errorf("AppendName = %q", got)
	}
	if got := string(AppendHexBytes(nil, []byte{1, 2, 3}, 2)); got != "0102…" {
		t.Errorf("AppendHexBytes = %q", got)
	}
	if got := string(AppendPlayer(nil, -1)) + string(AppendPlayer(nil, 3)); got != "p?p3" {
		t.Errorf("AppendPlayer = %q", got)
	}
}

func TestAppendTime(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	ts := t0.Add(1500 * time.Millisecond)
	for _, c := range []struct{ format, want string }{
		{"", "03:04:06.500006"},
		{"a", "03:04:06.500006"},
		{"ad", "2026-01-02 03:04:06.500006"},
		{"r", "1.500000"},
	} {
		l := Line{Time: c.format, T0: t0}
		if got := string(l.AppendTime(nil, ts)); got != c.want {
			t.Errorf("time %q: got %q, want %q", c.format, got, c.want)
		}
	}
}
