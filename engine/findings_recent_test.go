package engine

import (
	"math/rand/v2"
	"testing"

	"github.com/pmdump/pmdump/replay"
)

// boundedMap is the map with a queue of its keys that recentFrames stands
// for, written the plain way.
type boundedMap struct {
	m   map[replay.Frame]int
	q   []replay.Frame
	max int
}

func (b *boundedMap) add(k replay.Frame, v int) bool {
	if _, ok := b.m[k]; ok {
		return false
	}
	b.m[k] = v
	b.q = append(b.q, k)
	if len(b.q) > b.max {
		delete(b.m, b.q[0])
		b.q = b.q[1:]
	}
	return true
}

// TestRecentFramesAsMap runs the same random additions, changes, deletions
// and look-ups on a recentFrames and on a map with a queue, frames mostly
// rising as in a game, some repeated, some from long ago, and compares
// every answer.
func TestRecentFramesAsMap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max, span int
	}{
		{"one", 1, 4},
		{"small", 7, 20},
		{"ring of the acks", 512, 600},
		{"wide frames", 64, 1 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.max)))
			r := newRecentFrames[int](tc.max)
			b := &boundedMap{m: map[replay.Frame]int{}, max: tc.max}
			n := 0
			key := func() replay.Frame {
				if rng.IntN(4) == 0 {
					return replay.Frame{SLSN: rng.IntN(3) - 1, N: int32(n - rng.IntN(tc.span))}
				}
				return replay.Frame{SLSN: 1, N: int32(n)}
			}
			for i := range 20000 {
				n += rng.IntN(3)
				k := key()
				switch rng.IntN(4) {
				case 0, 1:
					if got, want := r.add(k, i), b.add(k, i); got != want {
						t.Fatalf("op %d: add(%v) = %v, map says %v", i, k, got, want)
					}
				case 2:
					r.del(k)
					delete(b.m, k)
				case 3:
					if _, ok := b.m[k]; ok {
						b.m[k] = -i
					}
					r.set(k, -i)
				}
				k = key()
				got, ok := r.get(k)
				want, wok := b.m[k]
				if ok != wok || got != want || r.has(k) != wok {
					t.Fatalf("op %d: get(%v) = %d %v, map says %d %v", i, k, got, ok, want, wok)
				}
				if r.len() != len(b.m) {
					t.Fatalf("op %d: %d frames, map has %d", i, r.count, len(b.m))
				}
			}
			for k, v := range b.m {
				if got, ok := r.get(k); !ok || got != v {
					t.Fatalf("at the end: get(%v) = %d %v, map says %d", k, got, ok, v)
				}
			}
		})
	}
}

// BenchmarkRecentFrames is the per-dif pattern: look up a new frame, add it,
// look up an acknowledged one, delete it.
func BenchmarkRecentFrames(b *testing.B) {
	r := newRecentFrames[int](4096)
	for i := 0; b.Loop(); i++ {
		r.add(replay.Frame{SLSN: 1, N: int32(i)}, i)
		k := replay.Frame{SLSN: 1, N: int32(i - 3)}
		if _, ok := r.get(k); ok {
			r.del(k)
		}
	}
}

// TestRecentFramesSize checks that a full table of max frames, max a power
// of two, takes 2·max slots, not twice that for the one frame added before
// the oldest is forgotten.
func TestRecentFramesSize(t *testing.T) {
	for _, max := range []int{16, 512, 4096} {
		r := newRecentFrames[bool](max)
		for i := range 3 * max {
			r.add(replay.Frame{SLSN: 1, N: int32(i)}, true)
		}
		if r.len() != max || len(r.direct) != 2*max || r.over.count != 0 {
			t.Errorf("max %d: %d frames in %d slots (%d beside them), want %d in %d", max, r.len(), len(r.direct), r.over.count, max, 2*max)
		}
	}
}
