package main

import (
	"testing"
	"time"

	"github.com/pmdump/pmdump/synth"
)

// TestFaultFlagsMute: --mute N:AT becomes a synth.Mute; a malformed one is
// a usage error.
func TestFaultFlagsMute(t *testing.T) {
	cases := []struct {
		in      []string
		want    []synth.Mute
		wantErr bool
	}{
		{in: []string{"2:20s"}, want: []synth.Mute{{Client: 2, At: 20 * time.Second}}},
		{in: []string{"1:500ms", "3:1m"}, want: []synth.Mute{{Client: 1, At: 500 * time.Millisecond}, {Client: 3, At: time.Minute}}},
		{in: []string{"2"}, wantErr: true},
		{in: []string{"x:1s"}, wantErr: true},
		{in: []string{"2:soon"}, wantErr: true},
	}
	for _, c := range cases {
		f := faultFlags{mutes: c.in}
		got, err := f.parse()
		if (err != nil) != c.wantErr {
			t.Errorf("%q: error %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if c.wantErr {
			continue
		}
		if len(got.Mutes) != len(c.want) {
			t.Errorf("%q: %v, want %v", c.in, got.Mutes, c.want)
			continue
		}
		for i := range c.want {
			if got.Mutes[i] != c.want[i] {
				t.Errorf("%q: %v, want %v", c.in, got.Mutes, c.want)
			}
		}
	}
	bad := synth.Faults{Mutes: []synth.Mute{{Client: 3, At: time.Second}}}
	if err := bad.Validate(2); err == nil {
		t.Error("a mute of client 3 in a game of 2 clients validated")
	}
}
