package gameserver

import (
	"fmt"
	"net/netip"
	"os"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

// Script is a game for Record: when each client joins and what it sends.
type Script struct {
	Version decode.Version // the game's wire version (modern when VersionUnknown)
	Seed    int64
	Rule    Rule  // how the server enters inputs
	Frames  int32 // frames the server runs
	Clients []ScriptClient
}

// ScriptClient is one scripted client. The frames are those in which the
// server reads the packets.
type ScriptClient struct {
	Color    int
	Hostname string
	Join     int32   // the frame the server reads the cjon in (the 1234 is read one frame before)
	Inputs   []Input // in the order sent
	Files    []int32 // frames the server reads a crfl in
}

// Input is one scripted control change.
type Input struct {
	Read  int32 // the frame the server reads the cdat in
	Frame int32 // the cdat's frame: below Read, the input is late and the server rewinds
	Move  byte
}

// recorder runs a Game in simulated time and writes every datagram.
type recorder struct {
	w       synth.PacketWriter
	epoch   time.Time
	t       time.Duration // time of the last datagram written
	game    *Game
	err     error
	pending map[int32][]queued // client datagrams by the frame they are read in
	byAddr  map[netip.AddrPort]int
	frame   int32 // the frame being run
}

type queued struct {
	client  int // index in the script
	payload []byte
	hello   bool
}

func listenAddr() netip.AddrPort { return netip.AddrPortFrom(synth.ServerAddr, synth.ListenPort) }

// serverPort is the server socket that talks to client n: its own in the
// versions with a handshake, else the listening one.
func (r *recorder) serverPort(n int) netip.AddrPort {
	if !r.game.Version().Has(decode.KindHandshake) {
		return listenAddr()
	}
	return netip.AddrPortFrom(synth.ServerAddr, uint16(40000+n))
}

// at moves the clock to d (never back) and returns the time stamp of a
// datagram sent then.
func (r *recorder) at(d time.Duration) time.Time {
	r.t = max(d, r.t+10*time.Microsecond)
	return r.epoch.Add(r.t)
}

func (r *recorder) write(d time.Duration, from, to netip.AddrPort, payload []byte) {
	if r.err == nil {
		r.err = r.w.WriteDatagram(r.at(d), from, to, payload)
	}
}

// Record runs the game of script in simulated time (frame N at N × 25 ms)
// and writes every datagram to w, as a capture taken on the server's host
// would hold them: each client's packets for frame N arrive in the 25 ms
// before it. The scripted clients acknowledge every state the frame after
// it was sent and every file.
func Record(script Script, w synth.PacketWriter) error {
	r := &recorder{w: w, epoch: synth.Epoch(script.Seed), pending: map[int32][]queued{}, byAddr: map[netip.AddrPort]int{}}
	var now time.Duration
	r.game = NewGame(script.Version, script.Seed, script.Rule, func(to netip.AddrPort, payload []byte) {
		n := r.byAddr[to]
		r.write(now, r.serverPort(n+1), to, payload)
		r.reply(n, payload)
	})
	v := r.game.Version()
	for i, c := range script.Clients {
		if c.Join < 1 {
			return fmt.Errorf("gameserver: client %d joins at frame %d, before the server's first frame", i+1, c.Join)
		}
		r.byAddr[synth.ClientAddrIn(v, i+1)] = i
		if v.Has(decode.KindHandshake) {
			r.queue(c.Join-1, queued{client: i, payload: encode(r.game.packet(decode.KindHandshake)), hello: true})
		}
		join := r.game.packet(decode.KindJoinRequest).Set("color", int64(c.Color)).SetBytes("hostname", []byte(c.Hostname))
		if join.HasField("name") {
			join.SetBytes("name", []byte(fmt.Sprintf("p%d", i+1)))
		}
		r.queue(c.Join, queued{client: i, payload: encode(join)})
		for _, in := range c.Inputs {
			p := r.game.packet(decode.KindInput).Set("player", 0).Set("frame", int64(in.Frame)).Set("move", int64(in.Move))
			r.queue(in.Read, queued{client: i, payload: encode(p)})
		}
		for _, f := range c.Files {
			r.queue(f, queued{client: i, payload: encode(r.game.packet(decode.KindFileRequest))})
		}
	}
	for n := int32(0); n < script.Frames; n++ {
		r.frame = n
		frameAt := time.Duration(n) * synth.FrameTime
		now = frameAt - 10*time.Millisecond
		for _, q := range r.pending[n] {
			addr := synth.ClientAddrIn(v, q.client+1)
			if q.hello {
				r.write(now, addr, listenAddr(), q.payload)
				r.game.Hello(addr)
				r.write(now, r.serverPort(q.client+1), addr, encode(r.game.packet(decode.KindHandshakeReply)))
				continue
			}
			if decode.KindOf(q.payload) == decode.KindInput {
				// The client's player number and level sequence, as it
				// knows them when it sends.
				var p decode.Packet
				decode.Decode(&p, q.payload, v)
				in := r.game.packet(decode.KindInput)
				in.Values = append(in.Values[:0], p.Values...)
				in.SetRole(decode.RolePlayer, int64(r.game.clients[addr].player)).SetRole(decode.RoleLevelSeq, int64(r.game.slsn))
				q.payload = encode(in)
			}
			r.write(now, addr, r.serverPort(q.client+1), q.payload)
			r.game.Receive(addr, q.payload)
		}
		delete(r.pending, n)
		now = frameAt + time.Millisecond
		if err := r.game.Step(); err != nil {
			return fmt.Errorf("gameserver: %w", err)
		}
		if r.err != nil {
			return fmt.Errorf("gameserver: %w", r.err)
		}
	}
	return nil
}

func (r *recorder) queue(frame int32, q queued) { r.pending[frame] = append(r.pending[frame], q) }

// reply makes client n answer what the server sent it, read in the next
// frame: a stak for the last piece of every dif, an sfak for the last
// piece of every file.
func (r *recorder) reply(n int, payload []byte) {
	next := r.frame + 1
	var p decode.Packet
	v := r.game.Version()
	if err := decode.Decode(&p, payload, v); err != nil || p.Layout == nil {
		return
	}
	k := p.Kind()
	if (k != decode.KindDifPiece && k != decode.KindFilePiece) || p.Int("seq") != p.Int("count")-1 {
		return
	}
	switch k {
	case decode.KindDifPiece:
		c := r.game.clients[synth.ClientAddrIn(v, n+1)]
		ak := r.game.packet(decode.KindDifAck).Set("player", int64(c.player)).
			Set("ack_frame", p.Int("dst")).Set("client_frame", p.Int("dst")).SetRole(decode.RoleLevelSeq, p.Int("slsn"))
		r.queue(next, queued{client: n, payload: encode(ak)})
	case decode.KindFilePiece:
		r.queue(next, queued{client: n, payload: encode(r.game.packet(decode.KindFileAck).Set("id", p.Int("id")))})
	}
}

// RecordFile runs the game of script like Record and writes it to a pcap
// file at path.
func RecordFile(path string, script Script) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("gameserver: %w", err)
	}
	w, err := synth.NewCaptureWriter(f, synth.Pcap)
	if err == nil {
		err = Record(script, w)
	}
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("gameserver: %w", cerr)
	}
	return err
}
