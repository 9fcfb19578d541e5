package source

import (
	"net/netip"
	"time"

	"github.com/gopacket/gopacket/ip4defrag"
	"github.com/gopacket/gopacket/layers"
)

// Limits of IPv4 reassembly. A datagram whose fragments stop coming is
// given up after fragTimeout of capture time; and whatever the times say,
// at most fragMaxDatagrams unfinished datagrams holding fragMaxBytes are
// kept: past either, the oldest are given up. A Purple Martians game sends
// few datagrams large enough to be fragmented, so these are far above what
// a real capture needs, and bound what a hostile one costs.
const (
	fragTimeout      = 30 * time.Second
	fragMaxDatagrams = 1024
	fragMaxBytes     = 16 << 20
	fragOverhead     = 256 // bytes a held fragment costs besides its data
)

// fragKey identifies the datagram an IPv4 fragment belongs to, as
// ip4defrag does.
type fragKey struct {
	src, dst netip.Addr
	id       uint16
	proto    layers.IPProtocol
}

// fragHeld is what is known of one unfinished datagram.
type fragHeld struct {
	frags int
	bytes int
	last  time.Time // when a fragment of it was last taken
}

// fragments reassembles IPv4 datagrams with gopacket's ip4defrag, within
// bounds of time, count and bytes. ip4defrag only forgets datagrams by
// time (DiscardOlderThan), so fragments keeps its own account of what is
// held: an entry per unfinished datagram whose last time is never older
// than ip4defrag's, so that discarding everything older than an entry's
// time discards that datagram there too. The account may overstate what
// ip4defrag holds, never understate it.
type fragments struct {
	d         *ip4defrag.IPv4Defragmenter
	held      map[fragKey]*fragHeld
	bytes     int
	lastSweep time.Time
}

func (f *fragments) init() {
	f.d = ip4defrag.NewIPv4Defragmenter()
	f.held = map[fragKey]*fragHeld{}
}

// add takes one fragment and returns the whole datagram when it completes
// one. Fragments given up are counted in c.FragmentsDropped.
func (f *fragments) add(ip *layers.IPv4, ts time.Time, c *Counters) *layers.IPv4 {
	// The reassembler keeps the fragments it is given, but the frame buffer
	// is reused: hand it a private copy.
	frag := *ip
	frag.Contents = append([]byte(nil), ip.Contents...)
	frag.Payload = append([]byte(nil), ip.Payload...)
	key := fragKey{addr(ip.SrcIP), addr(ip.DstIP), ip.Id, ip.Protocol}
	full, err := f.d.DefragIPv4WithTimestamp(&frag, ts)
	h := f.held[key]
	switch {
	case err != nil: // refused: ip4defrag forgot the datagram
		n := 1
		if h != nil {
			n += h.frags
			f.forget(key, h)
		}
		c.FragmentsDropped += n
	case full != nil:
		if h != nil {
			f.forget(key, h)
		}
	default: // held (or a duplicate of a fragment already held)
		if h == nil {
			h = &fragHeld{}
			f.held[key] = h
		}
		size := len(frag.Contents) + len(frag.Payload) + fragOverhead
		h.frags++
		h.bytes += size
		f.bytes += size
		if ts.After(h.last) {
			h.last = ts
		}
	}
	if ts.Sub(f.lastSweep) > fragTimeout {
		f.discardOlderThan(ts.Add(-fragTimeout), c)
		f.lastSweep = ts
	}
	for len(f.held) > fragMaxDatagrams || f.bytes > fragMaxBytes {
		var oldest time.Time
		first := true
		for _, h := range f.held {
			if first || h.last.Before(oldest) {
				oldest, first = h.last, false
			}
		}
		f.discardOlderThan(oldest.Add(time.Nanosecond), c)
	}
	return full
}

func (f *fragments) forget(key fragKey, h *fragHeld) {
	f.bytes -= h.bytes
	delete(f.held, key)
}

// discardOlderThan gives up the datagrams whose last fragment came before t.
func (f *fragments) discardOlderThan(t time.Time, c *Counters) {
	f.d.DiscardOlderThan(t)
	for k, h := range f.held {
		if h.last.Before(t) {
			c.FragmentsDropped += h.frags
			f.forget(k, h)
		}
	}
}
