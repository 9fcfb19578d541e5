package reassemble

import (
	"fmt"
	"net/netip"
	"time"
)

// How unfinished messages end: abandoned when their pieces stop coming,
// when their conversation or the capture ends.

// abandon ends an unfinished message as Incomplete.
func (a *Assembler) abandon(c *client, m *message, why string) {
	m.Status = Incomplete
	for i, pc := range m.pieces {
		if !pc.have {
			m.Missing = append(m.Missing, i)
		}
	}
	m.Err = fmt.Errorf("%s: %d of %d pieces missing %v", why, len(m.Missing), m.Count, m.Missing)
	a.finish(c, m)
}

// abandonStale abandons, oldest first, every unfinished message of c whose
// last piece is more than AbandonAfter older than c's newest piece. A
// message that started later can have been silent longer, so all are
// checked, not only the first.
func (a *Assembler) abandonStale(c *client) {
	for i := 0; i < len(c.pending); {
		m := c.pending[i]
		if c.newest.Sub(m.lastTS) <= a.limits.AbandonAfter {
			i++
			continue
		}
		a.abandon(c, m, "abandoned") // removes c.pending[i]
	}
}

// FlushClient ends the unfinished messages of a client's chain (see Chain;
// conversation 0) as Incomplete, oldest first: its session ended.
func (a *Assembler) FlushClient(client netip.AddrPort) { a.FlushChain(Chain{Client: client}) }

// FlushChain ends a chain's unfinished messages as Incomplete (its
// conversation ended), oldest first, and forgets the chain.
func (a *Assembler) FlushChain(l Chain) {
	c := a.clients[l]
	if c == nil {
		return
	}
	for len(c.pending) > 0 {
		a.abandon(c, c.pending[0], "session ended")
	}
	a.forget(c)
}

// Tick abandons, as AbandonAfter says, the unfinished messages that have
// been quiet since before now minus AbandonAfter: a live capture that goes
// silent still ends its difs.
func (a *Assembler) Tick(now time.Time) {
	for m := a.head; m != nil; {
		next := m.next
		if now.Sub(m.lastTS) > a.limits.AbandonAfter {
			a.abandon(a.clientOf(m), m, "abandoned")
		}
		m = next
	}
}

// OldestPendingN is the smallest capture frame number of the last piece of
// an unfinished message, or -1 when none is unfinished: every message that
// ends from now on has its LastN at or after it.
func (a *Assembler) OldestPendingN() int {
	n := -1
	for m := a.head; m != nil; m = m.next {
		if n < 0 || m.LastN < n {
			n = m.LastN
		}
	}
	return n
}

// Flush ends every unfinished message as Incomplete (at the end of a
// capture), oldest first.
func (a *Assembler) Flush() {
	for a.total > 0 {
		m := a.oldest()
		a.abandon(a.clientOf(m), m, "capture ended")
	}
}
