package engine

import (
	"fmt"
	"sort"
	"sync"
	"unsafe"

	"github.com/pmdump/pmdump/internal/spill"
)

// The entries of a long capture's packet index are paged out: each chunk
// that fills, past the first few the index's share of the memory budget
// holds, goes to a temporary file (a spill store) and is read back, a chunk
// at a time, into a small cache when looked at. An hour-long game has 2.1
// million packets: 84 MB of entries, of which a few chunks stay in memory.
// An index with a limit (IndexLimit) keeps its entries in memory: the limit
// bounds them.

// pageCache is how many paged-out chunks are kept in memory once read
// back: a scroll or a scan reads a chunk once.
const pageCache = 4

// The entries are written as they are in memory: 40 bytes, no pointers.
var _ [entrySize - unsafe.Sizeof(IndexEntry{})]struct{}
var _ [unsafe.Sizeof(IndexEntry{}) - entrySize]struct{}

// pager holds the paged-out chunks of an index (under the index's lock for
// writing, its own for the cache).
type pager struct {
	store  *spill.Store
	csize  int     // entries per chunk
	maxMem int     // full chunks that stay in memory
	inMem  int     // full chunks in memory
	off    []int64 // by chunk: where a paged-out chunk is in the store, -1 when in memory
	firstN []int32 // by chunk: the capture frame number of its first entry

	mu    sync.Mutex // the cache's, and the store's reads (readers share the index's lock)
	cache [pageCache]cachedChunk
	clock int
	err   error
}

type cachedChunk struct {
	k    int // the chunk, -1 for none
	c    []IndexEntry
	used int
}

func newPager(budget int, dir string, csize int) *pager {
	// A quarter of the share: the cache and the chunk being filled
	// come on top of it.
	p := &pager{store: spill.New("packet index pages", 0, dir, "pmdump-index-*"), csize: csize, maxMem: max(budget/4/(csize*entrySize), 1)}
	for i := range p.cache {
		p.cache[i].k = -1
	}
	return p
}

func chunkBytes(c []IndexEntry) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(c))), len(c)*entrySize)
}

// started records that chunk k starts with capture frame n, and pages out
// the full chunk before it when the memory's share is used (under the
// index's write lock).
func (p *pager) started(chunks [][]IndexEntry, k int, n int32) {
	p.firstN = append(p.firstN, n)
	p.off = append(p.off, -1)
	if k == 0 || p.err != nil {
		return
	}
	if p.inMem < p.maxMem {
		p.inMem++
		return
	}
	off, err := p.store.Put(chunkBytes(chunks[k-1]))
	if err != nil {
		p.err = fmt.Errorf("packet index: %w", err)
		p.inMem++ // it stays in memory
		return
	}
	p.off[k-1] = off
	p.mu.Lock()
	p.keep(k-1, chunks[k-1]) // the chunk just filled is the likeliest to be looked at
	p.mu.Unlock()
	chunks[k-1] = nil
}

// entry returns entry j of paged-out chunk k (under the index's read lock).
func (p *pager) entry(k, j int) IndexEntry {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clock++
	for i := range p.cache {
		if c := &p.cache[i]; c.k == k {
			c.used = p.clock
			return c.c[j]
		}
	}
	c := make([]IndexEntry, p.csize)
	if err := p.store.Get(chunkBytes(c), p.off[k]); err != nil {
		if p.err == nil {
			p.err = fmt.Errorf("packet index: %w", err)
		}
		return IndexEntry{loc: -1}
	}
	p.keep(k, c)
	return c[j]
}

// keep puts chunk k in the cache in place of the least recently used (p.mu
// held).
func (p *pager) keep(k int, c []IndexEntry) {
	old := 0
	for i := range p.cache {
		if p.cache[i].used < p.cache[old].used {
			old = i
		}
	}
	p.clock++
	p.cache[old] = cachedChunk{k: k, c: c, used: p.clock}
}

// chunkOf returns the chunk the first entry of frame n or later is in (an
// entry of it, or of the chunk after it, is the first).
func (p *pager) chunkOf(n int) int {
	return max(sort.Search(len(p.firstN), func(k int) bool { return int(p.firstN[k]) >= n })-1, 0)
}

// failure is the pager's failure, nil if none.
func (p *pager) failure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// memoryBytes is what the cache holds.
func (p *pager) memoryBytes() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(0)
	for _, c := range p.cache {
		n += int64(len(c.c)) * entrySize
	}
	return n
}

func (p *pager) close() error { return p.store.Close() }
