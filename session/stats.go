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

// Add counts one more packet of n bytes.
func (c *Count) Add(n int) { c.add(n) }

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
	// ByName counts game, malformed and unknown packets per name and
	// direction: every known name, and at most MaxNames pairs of names no
	// era knows; the packets of further unknown names are in
	// Untracked.Names.
	ByName map[NameDir]*Count
	Eras   [decode.MaxVersions]int // game packets per version, indexed by decode.Version
	// Untracked counts what went past the Tracker's bounds.
	Untracked Untracked

	byLayout    []*Count // ByName's entries of known layouts, by Layout.ID
	unknownKeys int      // ByName's keys of names no era knows
	lostNames   distinct[NameDir]
}

// Untracked counts what a Tracker saw but did not keep track of one by
// one, because it went past a bound (MaxConversations, MaxSessions,
// MaxServers, MaxNames). A front end says so ("N more conversations not
// tracked") rather than pretend the list it prints is complete.
type Untracked struct {
	// Conversations is the number of client endpoints past
	// MaxConversations; their packets went to the overflow conversation.
	Conversations int `json:"conversations"`
	// Rejoins is the number of handshakes that would have started a new
	// conversation past MaxSessions (or MaxConversations) and went on with
	// the endpoint's last conversation instead.
	Rejoins int `json:"rejoins"`
	// Servers is the number of server endpoints past MaxServers that were
	// not remembered as servers.
	Servers int `json:"servers"`
	// NameKeys is the number of unknown name and direction pairs past
	// MaxNames, and Names the packets and bytes they had.
	NameKeys int   `json:"name_keys"`
	Names    Count `json:"names"`
	// AtLeast is set when a count of distinct values (Conversations,
	// Servers, NameKeys) reached MaxUntracked: the true number is larger.
	AtLeast bool `json:"at_least"`
}

// Any reports whether anything went untracked.
func (u *Untracked) Any() bool {
	return u.Conversations > 0 || u.Rejoins > 0 || u.Servers > 0 || u.NameKeys > 0
}

// AddName adds one packet of n bytes to m's count for key k, creating the
// count unless m already holds MaxNames keys (plus room for every known
// name); it reports whether the packet was counted. Front ends that count
// names per conversation use it to stay within a bound like Stats.ByName's.
func AddName(m map[NameDir]*Count, k NameDir, n int) bool {
	c := m[k]
	if c == nil {
		if len(m) >= MaxNames+2*decode.NumLayouts() && !decode.Known([]byte(k.Name)) {
			return false
		}
		c = &Count{}
		m[k] = c
	}
	c.add(n)
	return true
}

func newStats() Stats {
	return Stats{ByName: map[NameDir]*Count{}, byLayout: make([]*Count, decode.NumLayouts())}
}

func (s *Stats) nonGame(n int) { s.NonGame.add(n) }

func (s *Stats) add(r *Record, n int) {
	switch r.Kind {
	case Game:
		s.Game.add(n)
		s.Eras[r.Version]++
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
		if c == nil && !decode.Known(r.Packet.Name[:]) {
			// Names no era knows are the only unbounded keys.
			if s.unknownKeys >= MaxNames {
				s.lostNames.add(k)
				s.Untracked.NameKeys = s.lostNames.n
				s.Untracked.AtLeast = s.Untracked.AtLeast || s.lostNames.full()
				s.Untracked.Names.add(n)
				return
			}
			s.unknownKeys++
		}
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
