package drive

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"net"
	"net/netip"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// The game's client, as drive plays it for each recorded client: it
// rebuilds the states the server sends, acknowledges them and answers
// file transfers.

type difKey struct {
	slsn     int
	src, dst int32
}

type partial struct {
	count  int
	got    int
	pieces [][]byte
}

type held struct {
	frame int32
	data  []byte
}

// driven is one recorded client played live.
type driven struct {
	rec     *Client
	conn    *net.UDPConn
	server  netip.AddrPort
	player  int
	slsn    int
	hist    []held
	newest  int32
	pending map[difKey]*partial
	files   map[int32]*partial
	seen    map[Key]bool
	shook   int32 // the clock's frame count when the last 1234 was sent, -1 for none
	joined  bool
	frames  int // frames since the join
	matched int // recorded states received
	stopped bool
}

// client handles what the server sent a recorded client.
func (r *runner) client(d *driven, a arrival) error {
	if d.server.IsValid() && a.from != d.server {
		return nil // not from the server's socket for this client
	}
	switch decode.KindOf(a.data) {
	case decode.KindHandshakeReply:
		if !d.server.IsValid() {
			d.server = a.from
			r.sendDue(r.cur.Add(1))
		}
		return nil
	case decode.KindJoinReply:
		var p decode.Packet
		if decode.Decode(&p, a.data, r.rec.Version) == nil && !d.joined {
			d.joined, d.player, d.slsn = true, int(intOf(fieldPlayer, &p)), int(intOf(fieldLevelSeq, &p))
			for i, ac := range r.rec.Actions {
				if ac.Client == d.rec.N && ac.Kind == Input {
					r.payload[i] = r.input(d, ac.Payload) // encoded now, not on the sending path
				}
			}
			at := Key{d.slsn, int32(intOf(fieldFrame, &p))}
			r.emit(Event{Event: "join", At: &at, Client: d.rec.N, Player: d.player})
		}
		return nil
	case decode.KindDifPiece:
		return r.piece(d, a.data)
	case decode.KindFilePiece:
		r.file(d, a.data)
	case decode.KindProbeReply:
		// The game's client echoes the server's time in a pang.
		var p decode.Packet
		if decode.Decode(&p, a.data, r.rec.Version) == nil && !d.stopped {
			t1 := valueOf(fieldPongT1, &p).Float
			r.send(d.conn, decode.Encode(nil, r.packet(decode.KindProbeEcho).SetFloat("t1", t1)), d.server)
		}
	}
	return nil
}

func (r *runner) file(d *driven, b []byte) {
	var p decode.Packet
	if decode.Decode(&p, b, r.rec.Version) != nil || d.stopped {
		return
	}
	id, seq, count := int32(intOf(fieldFileID, &p)), int(intOf(fieldSeq, &p)), int(intOf(fieldCount, &p))
	f := d.files[id]
	if f == nil {
		if len(d.files) >= maxPending {
			clear(d.files)
		}
		f = &partial{count: count, pieces: make([][]byte, count)}
		d.files[id] = f
	}
	if seq < len(f.pieces) && f.pieces[seq] == nil {
		f.pieces[seq] = []byte{}
		f.got++
	}
	if f.got == f.count {
		r.send(d.conn, decode.Encode(nil, r.packet(decode.KindFileAck).Set("id", int64(id))), d.server)
	}
}

// piece collects an stdf piece and, once its dif is whole, rebuilds the
// state, acknowledges it and compares it with the recording.
func (r *runner) piece(d *driven, b []byte) error {
	var p decode.Packet
	if decode.Decode(&p, b, r.rec.Version) != nil {
		return nil
	}
	k := difKey{int(intOf(fieldLevelSeq, &p)), int32(intOf(fieldDifBase, &p)), int32(intOf(fieldFrame, &p))}
	seq, count := int(intOf(fieldSeq, &p)), int(intOf(fieldCount, &p))
	if k.slsn != d.slsn {
		// A new level: the old states are no bases any more.
		d.slsn, d.hist, d.newest = k.slsn, nil, -1
		clear(d.pending)
	}
	pt := d.pending[k]
	if pt == nil {
		if len(d.pending) >= maxPending {
			clear(d.pending) // a server sending nonsense: start afresh
		}
		pt = &partial{count: count, pieces: make([][]byte, count)}
		d.pending[k] = pt
	}
	if seq >= len(pt.pieces) || pt.pieces[seq] != nil {
		return nil
	}
	pt.pieces[seq] = append([]byte{}, valueOf(fieldDifData, &p).Bytes...)
	pt.got++
	if pt.got < pt.count {
		return nil
	}
	delete(d.pending, k)
	for o := range d.pending {
		if o.dst <= k.dst {
			delete(d.pending, o) // overtaken
		}
	}
	var base []byte
	if k.src != 0 {
		for _, h := range d.hist {
			if h.frame == k.src {
				base = h.data
			}
		}
		if base == nil {
			r.counts.Unbuilt++
			r.stak(d, max(d.newest, 0))
			return nil
		}
	}
	state, err := r.inflate(pt.pieces)
	if err != nil {
		r.counts.Unbuilt++
		return nil
	}
	if base == nil {
		base = make([]byte, len(state))
	}
	statedif.Sub(state, base, state)
	if k.dst > d.newest {
		d.hist = append(d.hist, held{k.dst, state})
		if len(d.hist) > 8 {
			d.hist = d.hist[1:]
		}
		d.newest = k.dst
		r.stak(d, k.dst)
	}
	return r.compare(d, Key{k.slsn, k.dst}, state)
}

func (r *runner) inflate(pieces [][]byte) ([]byte, error) {
	z := bytes.Join(pieces, nil)
	var err error
	if r.zr == nil {
		r.zr, err = zlib.NewReader(bytes.NewReader(z))
	} else {
		err = r.zr.(zlib.Resetter).Reset(bytes.NewReader(z), nil)
	}
	if err != nil {
		return nil, err
	}
	out := make([]byte, r.size)
	if _, err := io.ReadFull(r.zr, out); err != nil {
		return nil, err
	}
	if n, _ := r.zr.Read(make([]byte, 1)); n > 0 {
		return nil, errors.New("dif larger than a state")
	}
	return out, nil
}

// stak acknowledges frame ack the way the game's client does.
func (r *runner) stak(d *driven, ack int32) {
	if d.stopped || !d.server.IsValid() {
		return
	}
	p := r.packet(decode.KindDifAck).Set("player", int64(d.player)).
		Set("ack_frame", int64(ack)).Set("client_frame", int64(ack)).SetRole(decode.RoleLevelSeq, int64(d.slsn))
	r.send(d.conn, decode.Encode(nil, p), d.server)
}

// compare checks a rebuilt state against the recording.
func (r *runner) compare(d *driven, k Key, state []byte) error {
	if d.seen[k] || r.rec.End.Less(k) {
		return nil // after the recording's end: nothing to compare with
	}
	d.seen[k] = true
	want, ok := d.rec.states[k]
	if !ok {
		r.counts.Unrecorded++
		return nil
	}
	d.matched++
	if sha256.Sum256(state) == want {
		r.counts.Equal++
		return nil
	}
	r.counts.Different++
	if len(r.differ) < maxDiffer {
		r.differ = append(r.differ, Differ{Client: d.rec.N, At: k})
	}
	if r.first == nil {
		r.first = r.rec.diverge(d.rec, d.player, k, state, r.sent)
		r.emit(Event{Event: "divergence", At: &k, Client: d.rec.N, Player: d.player, Divergence: r.first})
	}
	return nil
}
