package engine

import (
	"container/heap"

	"github.com/pmdump/pmdump/replay"
)

// stateOrder puts the states the builder emits (in the order their difs
// ended) in capture order of their last piece: a dif abandoned with pieces
// missing ends seconds after its last piece came.
type stateOrder struct {
	on      bool
	pending stateHeap
	// inflight is a monotonic queue of the messages handed to the builder
	// whose states are not out yet: its front has the smallest LastN.
	inflight []inflight
}

type inflight struct{ seq, n int }

// added records a message handed to the builder as Seq seq.
func (o *stateOrder) added(seq, n int) {
	if !o.on {
		return
	}
	for len(o.inflight) > 0 && o.inflight[len(o.inflight)-1].n >= n {
		o.inflight = o.inflight[:len(o.inflight)-1]
	}
	o.inflight = append(o.inflight, inflight{seq, n})
}

// emitted records that the state of Seq seq came out of the builder.
func (o *stateOrder) emitted(seq int) {
	for len(o.inflight) > 0 && o.inflight[0].seq <= seq {
		o.inflight = o.inflight[1:]
	}
}

// watermark is the smallest capture number a state still in the builder
// can have, -1 for none.
func (o *stateOrder) watermark() int {
	if len(o.inflight) == 0 {
		return -1
	}
	return o.inflight[0].n
}

func (o *stateOrder) push(s *replay.State) { heap.Push(&o.pending, s) }

// pop returns the buffered state with the smallest capture number if it is
// below water (any, when water is -1), or nil.
func (o *stateOrder) pop(water int) *replay.State {
	if len(o.pending) == 0 {
		return nil
	}
	if s := o.pending[0]; water < 0 || s.N < water {
		return heap.Pop(&o.pending).(*replay.State)
	}
	return nil
}

// stateHeap orders states by capture number, then by Seq.
type stateHeap []*replay.State

func (h stateHeap) Len() int { return len(h) }
func (h stateHeap) Less(i, j int) bool {
	if h[i].N != h[j].N {
		return h[i].N < h[j].N
	}
	return h[i].Seq < h[j].Seq
}
func (h stateHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *stateHeap) Push(x any)   { *h = append(*h, x.(*replay.State)) }
func (h *stateHeap) Pop() any {
	old := *h
	s := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return s
}
