package synth

import "crypto/sha256"

// snapshot is one state the server sent, shared by every client whose
// history holds it.
type snapshot struct {
	key  uint64
	data []byte
	sha  [32]byte
	refs int
}

// snapStore holds the states that some client's history refers to. A state
// is freed when no history refers to it, so memory stays bounded by
// statedif.History states per client.
type snapStore struct {
	size int
	m    map[uint64]*snapshot
	free [][]byte
}

func newSnapStore(size int) *snapStore {
	return &snapStore{size: size, m: map[uint64]*snapshot{}}
}

func snapKey(slsn uint8, frame int32) uint64 { return uint64(slsn)<<32 | uint64(uint32(frame)) }

// put returns the snapshot of key, copying cur into a new one if there is
// none yet. The caller must ref it.
func (s *snapStore) put(key uint64, cur []byte) *snapshot {
	if sn := s.m[key]; sn != nil {
		return sn
	}
	var b []byte
	if n := len(s.free); n > 0 {
		b, s.free = s.free[n-1], s.free[:n-1]
	} else {
		b = make([]byte, s.size)
	}
	copy(b, cur)
	sn := &snapshot{key: key, data: b, sha: sha256.Sum256(b)}
	s.m[key] = sn
	return sn
}

func (s *snapStore) unref(sn *snapshot) {
	sn.refs--
	if sn.refs <= 0 {
		delete(s.m, sn.key)
		s.free = append(s.free, sn.data)
		sn.data = nil
	}
}
