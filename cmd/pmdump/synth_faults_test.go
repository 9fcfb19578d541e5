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

// TestFaultFlagsForget: --forget N:AT[/EVERY] becomes a synth.Forget; a
// malformed one is a usage error, a period under a second does not
// validate.
func TestFaultFlagsForget(t *testing.T) {
	cases := []struct {
		in      string
		want    synth.Forget
		wantErr bool
	}{
		{in: "2:8s", want: synth.Forget{Client: 2, At: 8 * time.Second}},
		{in: "1:8s/5s", want: synth.Forget{Client: 1, At: 8 * time.Second, Every: 5 * time.Second}},
		{in: "1:8s/", wantErr: true},
		{in: "1:later", wantErr: true},
		{in: "8s", wantErr: true},
	}
	for _, c := range cases {
		f := faultFlags{forgets: []string{c.in}}
		got, err := f.parse()
		if (err != nil) != c.wantErr {
			t.Errorf("%q: error %v, want error %v", c.in, err, c.wantErr)
			continue
		}
		if !c.wantErr && (len(got.Forgets) != 1 || got.Forgets[0] != c.want) {
			t.Errorf("%q: %v, want %v", c.in, got.Forgets, c.want)
		}
	}
	for _, bad := range []synth.Forget{{Client: 3, At: time.Second}, {Client: 1, At: time.Second, Every: time.Millisecond}, {Client: 1, At: -time.Second}} {
		f := synth.Faults{Forgets: []synth.Forget{bad}}
		if err := f.Validate(2); err == nil {
			t.Errorf("%+v validated in a game of 2 clients", bad)
		}
	}
}
