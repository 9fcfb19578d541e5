package engine

import (
	"runtime"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// The fast pass in two stages. When Run reads a capture file into a packet
// index and no event needs the tracker's conversations as they are at each
// packet (packet and conversation events), the tracker and the index run
// ahead on the reading goroutine (front), batch by batch, and the engine's
// goroutine does the rest behind them (analyse): the index, which the
// packet list, its filters and jumps read, is complete sooner, and the
// whole pass takes the time of its slower stage, not of both.
//
// What the front stage hands over travels with the datagrams' batch (see
// source.PrefetchPrepared): each datagram's record, with its values copied
// out of the tracker's scratch, and its place in the index. A record's
// conversation is a copy made when the conversation last changed, since
// the tracker goes on changing the live one (its counts and times every
// packet, its player or era now and then); what the later stage reads of
// it (id, endpoints, era, player) is as it was at that packet.

// frontBatch is what the front stage made of one batch of datagrams.
type frontBatch struct {
	recs   []session.Record
	idx    []int          // each record's place in the index, -1 when none
	values []decode.Value // the records' Values and Entries
}

// twoStages reports whether Run runs the fast pass in two stages on input
// in (see front).
func (e *Engine) twoStages(in *Input) bool {
	if !e.stagesAllowed(in) {
		return false
	}
	if forceStages != 0 {
		return forceStages > 0
	}
	return runtime.GOMAXPROCS(0) > 1
}

// forceStages, when not 0, overrides the choice of twoStages (1: two
// stages wherever allowed, -1: never), for tests.
var forceStages int

// stagesAllowed reports whether the fast pass may run in two stages on
// input in: the engine keeps a packet index (without one the first stage
// is the tracker alone, which costs about what handing its records over
// does: stats of the 286k-packet file took 0.26 s in two stages against
// 0.22 s in one), a regular file (the reading goroutine never waits for
// input, so Close can wait for it), and no event that wants each packet's
// conversation as the tracker has it then.
func (e *Engine) stagesAllowed(in *Input) bool {
	return e.index != nil && in.Stat != nil && in.Stat.Mode().IsRegular() &&
		e.cfg.OnPacket == nil && !e.wants(PacketEvents) && !e.wants(ConversationEvents)
}

// front is the first stage of the fast pass (see above), on the reading
// goroutine: the tracker's records of a batch, then their places in the
// index. It takes the tracker's lock, never the engine's.
func (e *Engine) front(dgs []source.Datagram, aux *any) {
	fb, _ := (*aux).(*frontBatch)
	if fb == nil {
		fb = &frontBatch{}
		*aux = fb
	}
	fb.recs, fb.idx, fb.values = fb.recs[:0], fb.idx[:0], fb.values[:0]
	e.trackMu.Lock()
	for i := range dgs {
		r := e.tracker.Process(&dgs[i])
		fb.recs = append(fb.recs, *r)
		k := &fb.recs[len(fb.recs)-1]
		// The values go to the batch's own slice; when it grows, the
		// records before keep the old array, which holds theirs.
		if len(r.Packet.Values) > 0 {
			n := len(fb.values)
			fb.values = append(fb.values, r.Packet.Values...)
			k.Packet.Values = fb.values[n:len(fb.values):len(fb.values)]
		}
		if len(r.Packet.Entries) > 0 {
			n := len(fb.values)
			fb.values = append(fb.values, r.Packet.Entries...)
			k.Packet.Entries = fb.values[n:len(fb.values):len(fb.values)]
		}
		if r.Conv != nil {
			k.Conv = e.convCopy(r.Conv)
		}
	}
	e.trackMu.Unlock()
	for i := range fb.recs {
		x := -1
		if e.index != nil && fb.recs[i].Kind != session.NonGame {
			x = e.index.add(&fb.recs[i], &dgs[i], e.input)
		}
		fb.idx = append(fb.idx, x)
	}
}

// convCopy returns the copy of conversation c the later stage sees: the
// one made before unless c changed since in what that stage reads.
func (e *Engine) convCopy(c *session.Conversation) *session.Conversation {
	if c.ID >= 0 && c.ID < len(e.convCopies) {
		if k := e.convCopies[c.ID]; k != nil && sameConv(k, c) {
			return k
		}
	}
	k := new(session.Conversation)
	*k = *c
	if c.ID >= 0 && c.ID <= session.MaxConversations {
		for len(e.convCopies) <= c.ID {
			e.convCopies = append(e.convCopies, nil)
		}
		e.convCopies[c.ID] = k
	}
	return k
}

// sameConv reports whether a and b agree in all but what changes with
// every packet (their counts and times).
func sameConv(a, b *session.Conversation) bool {
	return a.ID == b.ID && a.Client == b.Client && a.Session == b.Session && a.Server == b.Server &&
		a.Listen == b.Listen && a.Version == b.Version && a.Player == b.Player && a.Hostname == b.Hostname &&
		a.Color == b.Color && a.Level == b.Level && a.SLSN == b.SLSN && a.Versions == b.Versions &&
		a.StateSize == b.StateSize && a.Unrecognised == b.Unrecognised && a.Name == b.Name &&
		a.Joins == b.Joins && a.JoinReplies == b.JoinReplies
}
