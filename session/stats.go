package session

import (
	"sort"

	"github.com/pmdump/pmdump/decode"
)

// Count is a number of packets and their payload bytes.
type Count struct {
	Packets int `json:"packets"`
	Bytes   int `json:"bytes"`
}

func (c *Count) add(n int) { c.Packets++; c.Bytes += n }

// NameDir keys per-name counts: a packet name and its direction.
type NameDir struct {
	Name string
	Dir  decode.Dir
}

// Stats counts what a Tracker has seen.
type Stats struct {
	Game      Count // clean game packets
	Malformed Count
	Unknown   Count
	NonGame   Count // UDP datagrams that are not game traffic
	ByName    map[NameDir]*Count
	Eras      [3]int // game packets per era, indexed by decode.Era

	byLayout []*Count // ByName's entries of known layouts, by Layout.ID
}

func newStats() Stats {
	return Stats{ByName: map[NameDir]*Count{}, byLayout: make([]*Count, decode.NumLayouts())}
}

func (s *Stats) nonGame(n int) { s.NonGame.add(n) }

func (s *Stats) add(r *Record, n int) {
	switch r.Kind {
	case Game:
		s.Game.add(n)
		s.Eras[r.Era]++
	case Malformed:
		s.Malformed.add(n)
	case Unknown:
		s.Unknown.add(n)
	}
	var c *Count
	l := r.Packet.Layout
	if l != nil && r.Dir == l.Dir {
		c = s.byLayout[l.ID]
	}
	if c == nil {
		k := NameDir{Name: r.Packet.NameString(), Dir: r.Dir}
		c = s.ByName[k]
		if c == nil {
			c = &Count{}
			s.ByName[k] = c
		}
		if l != nil && r.Dir == l.Dir {
			s.byLayout[l.ID] = c
		}
	}
	c.add(n)
}

// Names returns the keys of ByName sorted by name, then direction.
func (s *Stats) Names() []NameDir {
	keys := make([]NameDir, 0, len(s.ByName))
	for k := range s.ByName {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Name != keys[j].Name {
			return keys[i].Name < keys[j].Name
		}
		return keys[i].Dir < keys[j].Dir
	})
	return keys
}

// PerName sums ByName over directions: packets per name.
func (s *Stats) PerName() map[string]int {
	out := map[string]int{}
	for k, c := range s.ByName {
		out[k.Name] += c.Packets
	}
	return out
}
