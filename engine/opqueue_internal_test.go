package engine

import "testing"

// The op queue keeps the ops in the order pushed across its chunks, and
// drop forgets whole chunks of the oldest (or all), shifting the indices
// of the rest down by as many as it says.
func TestOpQueue(t *testing.T) {
	for _, tt := range []struct {
		name       string
		push, drop int
		dropped    int
	}{
		{"none pushed", 0, 0, 0},
		{"within a chunk, part", 10, 5, 0},
		{"within a chunk, all", 10, 10, 10},
		{"a chunk and a bit, the chunk", opChunk + 3, opChunk + 1, opChunk},
		{"three chunks, two and a half", 3 * opChunk, 2*opChunk + opChunk/2, 2 * opChunk},
		{"three chunks, all", 3 * opChunk, 3 * opChunk, 3 * opChunk},
		{"more than held", 5, 9, 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var q opQueue
			for i := range tt.push {
				q.push(rebuildOp{seq: i})
			}
			if got := q.drop(tt.drop); got != tt.dropped {
				t.Fatalf("drop(%d) = %d, want %d", tt.drop, got, tt.dropped)
			}
			if q.len() != tt.push-tt.dropped {
				t.Fatalf("len %d, want %d", q.len(), tt.push-tt.dropped)
			}
			for i := range q.len() {
				if s := q.at(i).seq; s != tt.dropped+i {
					t.Fatalf("op %d is the %dth pushed, want the %dth", i, s, tt.dropped+i)
				}
			}
			// What was dropped is used again, and pushes go on in order.
			q.push(rebuildOp{seq: -1})
			if s := q.at(q.len() - 1).seq; s != -1 {
				t.Errorf("last op %d after a push, want -1", s)
			}
			if len(q.free) > maxFreeChunks {
				t.Errorf("%d free chunks kept, at most %d", len(q.free), maxFreeChunks)
			}
		})
	}
}
