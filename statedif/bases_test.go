package statedif_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/statedif"
)

// TestBases plays the game's rules for a client's bases (mwStateHistory:
// add_state, set_ack_state, get_last_ack_state) step by step. Steps:
// "add F" keeps frame F (its value the text "vF"), "ack F" takes an
// acknowledgement and must report the state kept, "nack F" one that must
// report none, "base F" / "base -" the base of the next dif, "len N" the
// states kept, "reset" a new level sequence.
func TestBases(t *testing.T) {
	upTo := func(n int) string {
		var s []string
		for f := 1; f <= n; f++ {
			s = append(s, fmt.Sprintf("add %d", f))
		}
		return strings.Join(s, ",")
	}
	tests := []struct {
		name  string
		steps string
	}{
		{"nothing acknowledged", "base -,add 1,base -,len 1"},
		{"an acknowledged state is the base", "add 1,add 2,ack 1,base 1,add 3,base 1,ack 3,base 3"},
		{"an acknowledgement of a frame not kept leaves none", "add 1,ack 1,base 1,nack 7,base -"},
		{"eight kept", upTo(8) + ",len 8,ack 1,base 1"},
		{"the ninth replaces the lowest frame", upTo(8) + ",ack 2,add 9,len 8,nack 1,ack 2,base 2,add 10,base -,nack 2"},
		{"replacing the acknowledged state leaves no base", upTo(8) + ",ack 1,add 9,base -"},
		{"the lowest frame, not the oldest, goes", "add 10,add 3," + "add 11,add 12,add 13,add 14,add 15,add 16,add 17,ack 10,base 10,nack 3"},
		{"the same frame again takes its own slot", upTo(8) + ",ack 5,add 5,len 8,base 5,add 9,ack 2,base 2"},
		{"a reset forgets every base", "add 1,add 2,ack 2,reset,base -,len 0,nack 2,add 2,nack 1,ack 2,base 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b statedif.Bases[string]
			for i, step := range strings.Split(tt.steps, ",") {
				op, arg, _ := strings.Cut(step, " ")
				n, _ := strconv.Atoi(arg)
				f := int32(n)
				switch op {
				case "add":
					*b.Add(f) = "v" + arg
				case "ack", "nack":
					if got := b.Ack(f); got != (op == "ack") {
						t.Fatalf("step %d %q: Ack reports %v", i, step, got)
					}
				case "base":
					src, v, ok := b.Base()
					switch {
					case arg == "-" && ok:
						t.Fatalf("step %d %q: base %d", i, step, src)
					case arg != "-" && (!ok || src != f || v != "v"+arg):
						t.Fatalf("step %d %q: base %d %q %v", i, step, src, v, ok)
					}
				case "len":
					if b.Len() != n || len(b.Kept()) != n {
						t.Fatalf("step %d %q: %d kept", i, step, b.Len())
					}
				case "reset":
					b.Reset()
				default:
					t.Fatalf("bad step %q", step)
				}
			}
			for _, k := range b.Kept() {
				if k.Value != fmt.Sprintf("v%d", k.Frame) {
					t.Errorf("frame %d keeps %q", k.Frame, k.Value)
				}
			}
		})
	}
}

// TestBasesReuse checks that Add hands back the value a slot held, so a
// server can reuse its buffer, also after a Reset.
func TestBasesReuse(t *testing.T) {
	var b statedif.Bases[[]byte]
	for f := range int32(8) {
		*b.Add(f) = []byte{byte(f)}
	}
	if v := b.Add(8); string(*v) != "\x00" {
		t.Errorf("the ninth state's slot held %v, want frame 0's", *v)
	}
	b.Reset()
	if v := b.Add(100); *v == nil {
		t.Error("after a reset, Add handed back no buffer")
	}
}
