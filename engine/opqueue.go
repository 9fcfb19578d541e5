package engine

// opQueue is the in-memory part of the backlog: ops in the order pushed,
// from index 0 (the oldest kept) to len()-1, in chunks of opChunk ops. A
// slice grown by append would copy every op it holds each time it grows,
// and into new memory the system must give (a tenth of the one-hour
// game's fast pass); chunks are filled in place and used again.
type opQueue struct {
	chunks []*[opChunk]rebuildOp
	n      int // ops from chunks[0][0] on
	free   []*[opChunk]rebuildOp
}

// opChunk is how many ops a chunk holds (about 100 KB of them).
const opChunk = 1024

// maxFreeChunks bounds the chunks kept for use again.
const maxFreeChunks = 8

func (q *opQueue) len() int { return q.n }

// at returns the op at index i (0 <= i < len()).
func (q *opQueue) at(i int) *rebuildOp { return &q.chunks[i/opChunk][i%opChunk] }

// push appends an op.
func (q *opQueue) push(o rebuildOp) {
	if q.n == len(q.chunks)*opChunk {
		var c *[opChunk]rebuildOp
		if k := len(q.free); k > 0 {
			c, q.free = q.free[k-1], q.free[:k-1]
		} else {
			c = new([opChunk]rebuildOp)
		}
		q.chunks = append(q.chunks, c)
	}
	*q.at(q.n) = o
	q.n++
}

// drop forgets the first k ops (they were taken), whole chunks at a time:
// it returns how many it forgot, a multiple of opChunk, or all of them;
// indices after them go down by as many.
func (q *opQueue) drop(k int) int {
	if k >= q.n {
		k = q.n
	} else {
		k -= k % opChunk
	}
	full := (k + opChunk - 1) / opChunk
	for _, c := range q.chunks[:full] {
		*c = [opChunk]rebuildOp{}
		if len(q.free) < maxFreeChunks {
			q.free = append(q.free, c)
		}
	}
	q.chunks = append(q.chunks[:0], q.chunks[full:]...)
	q.n -= k
	return k
}

// reset forgets every op and every chunk.
func (q *opQueue) reset() { *q = opQueue{} }
