package replay

import (
	"bytes"
	"strings"
	"testing"
)

// A checkpoint decodes to the state it was made of, into the caller's
// buffer when it is large enough; one of another size, or bytes that are
// no checkpoint, are an error, not a state.
func TestCheckpointRoundTrip(t *testing.T) {
	state := make([]byte, 112384)
	for i := range state {
		if i%7 == 0 {
			state[i] = byte(i)
		}
	}
	var b buffers
	ckpt := b.compress(state)
	for _, tt := range []struct {
		name string
		z    []byte
		size int
		dst  []byte
		err  string
	}{
		{"whole", ckpt, len(state), nil, ""},
		{"into a buffer", ckpt, len(state), make([]byte, 0, MaxStateSize), ""},
		{"another size", ckpt, len(state) - 1, nil, "decodes to 112384 bytes, the state has 112383"},
		{"cut short", ckpt[:len(ckpt)/2], len(state), nil, "corrupt"},
		{"not a checkpoint", []byte("not a checkpoint at all"), len(state), nil, "bytes, the state has"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCheckpoint(tt.dst, tt.z, tt.size)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want one saying %q", err, tt.err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, state) {
				t.Fatalf("decoded %d bytes (%v), want the state", len(got), err)
			}
			if tt.dst != nil && &got[0] != &tt.dst[:1][0] {
				t.Error("decoded into a new buffer, not the caller's")
			}
		})
	}
	// Compressing again reuses the scratch and returns the caller's own copy.
	again := b.compress(state)
	if !bytes.Equal(again, ckpt) || &again[0] == &ckpt[0] {
		t.Error("a second checkpoint of the same state differs or shares the first one's bytes")
	}
}
