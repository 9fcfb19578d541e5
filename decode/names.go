package decode

// NameKey packs a 4-byte name into an integer map key.
func NameKey(b []byte) uint32 {
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// nameInfo is what is known of one packet name: its layout in each version,
// and its distinct layouts.
type nameInfo struct {
	id       int // 0.. in order of registration
	dir      Dir
	kind     Kind
	layout   [MaxVersions]*Layout // indexed by Version
	distinct []*Layout            // each layout of the name once, oldest first
}

// names finds a name's nameInfo. It is a small open-addressing table, not
// a map: every packet of a capture is looked up, and this is several times
// cheaper than hashing into a map.
var names nameTable

// nameSlots is the size of the name table: a power of two well above the
// number of names of all versions, so probes stay short.
const nameSlots = 256

type nameTable [nameSlots]struct {
	key  uint32
	info *nameInfo
}

func nameSlot(k uint32) uint32 { return (k * 0x9E3779B1) >> 24 }

func (t *nameTable) get(k uint32) *nameInfo {
	for i := nameSlot(k); ; i = (i + 1) % nameSlots {
		e := &t[i]
		if e.info == nil || e.key == k {
			return e.info
		}
	}
}

func (t *nameTable) put(k uint32, n *nameInfo) {
	for i, probes := nameSlot(k), 0; ; i, probes = (i+1)%nameSlots, probes+1 {
		if probes == nameSlots/2 {
			panic("decode: the name table is too small")
		}
		if e := &t[i]; e.info == nil {
			e.key, e.info = k, n
			return
		}
	}
}

// Lookup returns the layout of a name in a version, or nil.
func Lookup(v Version, name []byte) *Layout {
	if len(name) < 4 || v >= MaxVersions {
		return nil
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.layout[v]
	}
	return nil
}

// DirOf returns the direction a known name travels in (the same in every
// version that has it), or DirUnknown for a name no version knows.
func DirOf(name []byte) Dir {
	if len(name) < 4 {
		return DirUnknown
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.dir
	}
	return DirUnknown
}

// KindOf returns the kind of a known name (the same in every version that
// has it), or KindUnknown.
func KindOf(name []byte) Kind {
	if len(name) < 4 {
		return KindUnknown
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.kind
	}
	return KindUnknown
}

// LayoutsOf returns every distinct layout of a name, oldest first (nil for
// a name no version knows).
func LayoutsOf(name []byte) []*Layout {
	if len(name) < 4 {
		return nil
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.distinct
	}
	return nil
}

// NumLayouts is the number of distinct layouts of all versions; see
// Layout.ID.
func NumLayouts() int { return len(allLayouts) }

// AllLayouts returns every distinct layout, in the order they were
// registered (oldest version first).
func AllLayouts() []*Layout { return allLayouts }

// Known reports whether name is a packet name of any version.
func Known(name []byte) bool { return DirOf(name) != DirUnknown }

var allLayouts []*Layout

// numNames counts the distinct packet names.
var numNames int

// NameID numbers a known packet name from 0 to NumNames()-1 (-1 for a name
// no version knows), so callers can keep per-name tables in arrays.
func NameID(name []byte) int {
	if len(name) < 4 {
		return -1
	}
	if n := names.get(NameKey(name)); n != nil {
		return n.id
	}
	return -1
}

// NumNames is the number of distinct packet names of all versions.
func NumNames() int { return numNames }

// MaxNames bounds NumNames, so per-name tables can be arrays.
const MaxNames = 64

// register enters layout l as version v's layout of its name.
func register(v Version, l *Layout) {
	if l.index == nil {
		l.finish()
		l.ID = len(allLayouts)
		allLayouts = append(allLayouts, l)
	}
	if len(l.Name) != 4 {
		panic("decode: packet name " + l.Name + " is not 4 bytes")
	}
	if l.Kind == KindUnknown {
		panic("decode: " + l.Name + " has no kind")
	}
	k := NameKey([]byte(l.Name))
	n := names.get(k)
	if n == nil {
		n = &nameInfo{id: numNames, dir: l.Dir, kind: l.Kind}
		numNames++
		names.put(k, n)
	}
	if n.dir != l.Dir {
		panic("decode: " + l.Name + " travels in different directions in different versions")
	}
	if n.kind != l.Kind {
		panic("decode: " + l.Name + " is of different kinds in different versions")
	}
	if n.layout[v] != nil && n.layout[v] != l {
		panic("decode: two layouts of " + l.Name + " in one version")
	}
	n.layout[v] = l
	for _, d := range n.distinct {
		if d == l {
			return
		}
	}
	n.distinct = append(n.distinct, l)
}

// commonWords are packet names that are also words other traffic sends.
var commonWords = map[string]bool{"ping": true, "pong": true, "pang": true, "JUNK": true}

// CommonWord reports whether a packet name is also a common word or number
// (ping, 1234): such a name off the game's conversations and port is other
// traffic, not a malformed game packet.
func CommonWord(name []byte) bool {
	if len(name) < 4 {
		return false
	}
	if commonWords[string(name[:4])] {
		return true
	}
	for _, b := range name[:4] {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}
