package replay

import "sync"

// Gate bounds how many chains rebuild a state at the same moment, over one
// Builder or several: the rebuild takes at most the cores it is given, and
// the scratch buffers of a build (the inflated dif and the new state, up
// to MaxStateSize each) are held by at most that many chains.
type Gate struct {
	mu    sync.Mutex
	cond  sync.Cond
	limit int
	busy  int
	free  []*buffers // the scratch of builds that ended, for the next
}

// NewGate returns a gate that lets n chains build at once (at least one).
func NewGate(n int) *Gate {
	g := &Gate{limit: max(n, 1)}
	g.cond.L = &g.mu
	return g
}

// SetLimit changes how many chains may build at once (at least one);
// chains already building finish.
func (g *Gate) SetLimit(n int) {
	g.mu.Lock()
	g.limit = max(n, 1)
	g.cond.Broadcast()
	g.mu.Unlock()
}

// Limit is how many chains may build at once.
func (g *Gate) Limit() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit
}

// enter waits until a chain may build and returns the scratch it builds
// in: no more scratch exists than builds may run at once.
func (g *Gate) enter() *buffers {
	g.mu.Lock()
	defer g.mu.Unlock()
	for g.busy >= g.limit {
		g.cond.Wait()
	}
	g.busy++
	if n := len(g.free); n > 0 {
		b := g.free[n-1]
		g.free = g.free[:n-1]
		return b
	}
	return new(buffers)
}

// leave ends a build and takes its scratch back.
func (g *Gate) leave(b *buffers) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	if g.busy+len(g.free) < g.limit {
		g.free = append(g.free, b)
	}
	g.cond.Signal()
}
