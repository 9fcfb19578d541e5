package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// Options configure Run.
type Options struct {
	// Timeout is how long the server may stay silent (no snfo) before Run
	// gives up; 0 means 5 s.
	Timeout time.Duration
	// Handshake is how many frames before its join a client sends its
	// 1234; 0 means 20.
	Handshake int32
	// OnEvent receives the events of the run, on Run's goroutine.
	OnEvent func(Event)
	// ProgressEvery is how many frames apart progress events are; 0
	// means 40 (a second of game).
	ProgressEvery int32
}

// Counts are the running counts of a run.
type Counts struct {
	Equal       int `json:"equal"`        // states the server sent that equal the recorded ones
	Different   int `json:"different"`    // states that differ from the recorded ones
	Missing     int `json:"missing"`      // recorded states the server did not send (at the end)
	Unrecorded  int `json:"unrecorded"`   // states the server sent, up to the recording's end, that the recording does not have
	Unbuilt     int `json:"unbuilt"`      // difs whose base the driver did not hold
	LateActions int `json:"late_actions"` // packets sent after the server had begun their frame
}

// Summary is the outcome of a run.
type Summary struct {
	Counts
	Clients    int         `json:"clients"`
	Actions    int         `json:"actions"`
	Uncertain  int         `json:"uncertain"`
	End        Key         `json:"end"`
	Reproduced bool        `json:"reproduced"` // every recorded state was sent again, none differed
	First      *Divergence `json:"first_divergence,omitempty"`
	Differ     []Differ    `json:"differ,omitempty"` // the first states that differ
}

// Event is one thing a run reports. Event says which: "join" (a client
// joined: Client, Player, At), "late" (Action sent after its frame had
// begun, At the frame it was sent in), "progress" (Counts, At),
// "divergence" (the first state that differs), "summary".
type Event struct {
	Event      string      `json:"event"`
	At         *Key        `json:"at,omitempty"`
	Client     int         `json:"client,omitempty"`
	Player     int         `json:"player,omitempty"`
	Action     *Action     `json:"action,omitempty"`
	Counts     *Counts     `json:"counts,omitempty"`
	Divergence *Divergence `json:"divergence,omitempty"`
	Summary    *Summary    `json:"summary,omitempty"`
}

type arrival struct {
	who  int // index of the client, -1 for the clock
	from netip.AddrPort
	data []byte
}

// runner is one run.
type runner struct {
	rec     *Recording
	opt     Options
	target  netip.AddrPort
	in      chan arrival // what the clients' sockets receive
	clockIn chan arrival // what the clock's socket receives: handled first
	clock   *net.UDPConn
	clients []*driven
	size    int
	cur     Key // the frame the server finished last (its snfo)
	started bool
	next    int // first action not sent
	sent    map[*Action]Key
	counts  Counts
	first   *Divergence
	dif     []byte
	zr      io.ReadCloser
	// the server's socket for the clock, and the datagrams sent to the
	// server so far (the keep-alives do not count)
	clockServer netip.AddrPort
	sentCount   int64
	start       time.Time
	frames      int32 // frames the clock has shown
	differ      []Differ
}

// maxDiffer bounds the differing states a summary lists; maxPending the
// difs and files a client collects pieces of at once.
const (
	maxDiffer  = 100
	maxPending = 64
)

// pingEvery is how many frames apart a client pings the server.
const pingEvery = decode.PingEvery

// Differ is a state that differs from the recorded one.
type Differ struct {
	Client int `json:"client"`
	At     Key `json:"at"`
}

// send sends one datagram to the server and counts the requests the
// server acts on in the game (handshakes, joins, inputs, file requests).
func (r *runner) send(c *net.UDPConn, payload []byte, to netip.AddrPort) {
	switch decode.KindOf(payload) {
	case decode.KindHandshake, decode.KindRemoteJoin, decode.KindJoinRequest, decode.KindInput, decode.KindFileRequest:
		r.sentCount++
	}
	c.WriteToUDPAddrPort(payload, to)
}

// packet encodes a packet of kind k of the recording's version.
func (r *runner) packet(k decode.Kind) *decode.Packet { return decode.MustNewKind(r.rec.Version, k) }

// keepAlive tells the server the clock client is there (rctl 0), with the
// count of requests sent to the server so far as its value.
func (r *runner) keepAlive() {
	p := r.packet(decode.KindRemoteCommand).Set("command", 0).SetFloat("value", float64(r.sentCount))
	r.clock.WriteToUDPAddrPort(decode.Encode(nil, p), r.clockServer)
}

// Run plays the recording's clients against the server listening at
// target (HOST:PORT) and compares every state it sends with the recorded
// one, until the recording's last state. It returns the summary; the error
// is for a run that could not go on (no server, ctx done: then with the
// summary of what was compared so far).
func Run(ctx context.Context, rec *Recording, target string, opt Options) (*Summary, error) {
	ap, err := resolve(target)
	if err != nil {
		return nil, err
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Second
	}
	if opt.Handshake <= 0 {
		opt.Handshake = 20
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = 40
	}
	r := &runner{rec: rec, opt: opt, target: ap, in: make(chan arrival, 8192), clockIn: make(chan arrival, 256), sent: map[*Action]Key{}, start: time.Now()}
	r.size = rec.stateSize()
	if r.size == 0 {
		return nil, errors.New("drive: the recording has no state")
	}
	r.dif = make([]byte, r.size)
	defer r.close()
	if r.clock, err = r.listen(-1); err != nil {
		return nil, err
	}
	for _, c := range rec.Clients {
		d := &driven{rec: c, pending: map[difKey]*partial{}, files: map[int32]*partial{}, seen: map[Key]bool{}, shook: -1, newest: -1}
		r.clients = append(r.clients, d)
		if d.conn, err = r.listen(len(r.clients) - 1); err != nil {
			return nil, err
		}
	}
	if err := r.remoteControl(ctx); err != nil {
		return nil, err
	}
	if err := r.loop(ctx); err != nil {
		if ctx.Err() != nil {
			return r.summary(), err // interrupted: what was compared so far
		}
		return nil, err
	}
	return r.summary(), nil
}

func resolve(target string) (netip.AddrPort, error) {
	ua, err := net.ResolveUDPAddr("udp", target)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("drive: server address: %w", err)
	}
	ap := ua.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

func (r *runner) emit(ev Event) {
	if r.opt.OnEvent != nil {
		r.opt.OnEvent(ev)
	}
}

// listen opens a socket of the target's family and forwards what it
// receives to the loop.
func (r *runner) listen(who int) (*net.UDPConn, error) {
	network := "udp4"
	if r.target.Addr().Is6() {
		network = "udp6"
	}
	c, err := net.ListenUDP(network, nil)
	if err != nil {
		return nil, fmt.Errorf("drive: %w", err)
	}
	c.SetReadBuffer(4 << 20)
	go func() {
		for {
			buf := make([]byte, 2048)
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // ICMP errors surface here; the loop's timeout decides
			}
			a := arrival{who: who, from: netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), data: buf[:n]}
			if who == -1 {
				r.clockIn <- a
			} else {
				r.in <- a
			}
		}
	}()
	return c, nil
}

func (r *runner) close() {
	if r.clock != nil {
		r.clock.Close()
	}
	for _, d := range r.clients {
		if d.conn != nil {
			d.conn.Close()
		}
	}
	if r.zr != nil {
		r.zr.Close()
	}
}

// remoteControl joins the clock: 1234, then cjrc to the server's socket
// for it (straight to the server's one socket in the versions without a
// handshake); the server then sends snfo after every frame.
func (r *runner) remoteControl(ctx context.Context) error {
	var server netip.AddrPort
	if !r.rec.Version.Has(decode.KindHandshake) {
		server = r.target
	}
	deadline := time.Now().Add(r.opt.Timeout)
	tick := time.NewTicker(150 * time.Millisecond)
	defer tick.Stop()
	join := decode.Encode(nil, r.packet(decode.KindRemoteJoin))
	send := func() {
		if !server.IsValid() {
			r.send(r.clock, decode.Encode(nil, r.packet(decode.KindHandshake)), r.target)
		} else {
			r.send(r.clock, join, server)
		}
	}
	send()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if time.Now().After(deadline) {
				if !server.IsValid() {
					return fmt.Errorf("drive: no answer (5678) from a game server at %s", r.target)
				}
				return fmt.Errorf("drive: the server at %s does not accept a remote-control join (cjrc)", r.target)
			}
			send()
		case a := <-r.clockIn:
			if len(a.data) < 4 {
				continue
			}
			switch decode.KindOf(a.data) {
			case decode.KindHandshakeReply:
				if !server.IsValid() {
					server = a.from
					send()
				}
			case decode.KindRemoteJoinReply:
				r.clockServer = server
				return nil
			case decode.KindRemoteInfo:
				r.clockServer = server
				r.clockIn <- a // the clock runs: the loop takes it
				return nil
			}
		}
	}
}

func (r *runner) loop(ctx context.Context) error {
	last := time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	clock := func(a arrival) (bool, error) {
		if decode.KindOf(a.data) != decode.KindRemoteInfo {
			return false, nil
		}
		last = time.Now()
		done, err := r.frame(a.data)
		if done && err == nil {
			err = r.settle(ctx)
		}
		return done, err
	}
	for {
		// The clock first: the inputs of the next frame go out before
		// the states that queued up are rebuilt.
		select {
		case a := <-r.clockIn:
			if done, err := clock(a); err != nil || done {
				return err
			}
			continue
		default:
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if time.Since(last) > r.opt.Timeout {
				return fmt.Errorf("drive: the server at %s sent no frame (snfo) for %v after frame %v", r.target, r.opt.Timeout, r.cur)
			}
		case a := <-r.clockIn:
			if done, err := clock(a); err != nil || done {
				return err
			}
		case a := <-r.in:
			if len(a.data) < 4 {
				continue
			}
			if err := r.client(r.clients[a.who], a); err != nil {
				return err
			}
		}
	}
}

// settle handles what the clients received after the clock said the
// recording's end was passed (the states it overtook), until every client
// has received every recorded state or for at most 200 ms.
func (r *runner) settle(ctx context.Context) error {
	limit := time.NewTimer(200 * time.Millisecond)
	defer limit.Stop()
	for !r.complete() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C:
			return nil
		case a := <-r.in:
			if len(a.data) >= 4 {
				if err := r.client(r.clients[a.who], a); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// complete reports whether every client has received every state
// recorded for it.
func (r *runner) complete() bool {
	for _, d := range r.clients {
		if d.matched < len(d.rec.states) {
			return false
		}
	}
	return true
}

// frame handles an snfo: the server finished a frame. It sends what the
// server must read in the next one and reports whether the run is over.
func (r *runner) frame(b []byte) (bool, error) {
	var p decode.Packet
	if err := decode.Decode(&p, b, r.rec.Version); err != nil {
		return false, nil
	}
	n := int32(intOf(fieldFrame, &p))
	switch {
	case !r.started:
		r.started = true
		r.cur = Key{0, n}
	case n == r.cur.Frame:
		return false, nil // another piece of the same frame
	case n < r.cur.Frame:
		r.cur = Key{r.cur.SLSN + 1, n} // a new level: frames start again
	default:
		r.cur.Frame = n
	}
	r.frames++
	next := r.cur.Add(1)
	handshake := r.rec.Version.Has(decode.KindHandshake)
	for _, d := range r.clients {
		if !handshake {
			d.server = r.target // the join request goes straight to the server's one socket
		} else if !d.joined && d.shook < 0 && !next.Less(d.rec.Join.Add(-r.opt.Handshake)) ||
			!d.server.IsValid() && d.shook >= 0 && r.frames-d.shook >= 5 {
			r.send(d.conn, decode.Encode(nil, r.packet(decode.KindHandshake)), r.target) // again after 5 frames without a 5678
			d.shook = r.frames
		}
		if !d.stopped && d.rec.Last.Less(next) && d.joined {
			d.stopped = true
		}
		if d.joined && !d.stopped {
			// Once a second, a ping, as the game's client sends.
			if d.frames%pingEvery == 0 {
				p := r.packet(decode.KindProbe).SetFloat("t0", time.Since(r.start).Seconds())
				r.send(d.conn, decode.Encode(nil, p), d.server)
			}
			d.frames++
		}
	}
	r.sendDue(next)
	r.keepAlive()
	if r.cur.Frame%r.opt.ProgressEvery == 0 {
		c := r.counts
		at := r.cur
		r.emit(Event{Event: "progress", At: &at, Counts: &c})
	}
	return !r.cur.Less(r.rec.End.Add(1)), nil
}

// sendDue sends every action due by frame next, in capture order; a
// client's actions wait while it has no server socket yet.
func (r *runner) sendDue(next Key) {
	blocked := map[int]bool{}
	for i := r.next; i < len(r.rec.Actions); i++ {
		a := r.rec.Actions[i]
		if next.Less(a.Ordered) {
			break
		}
		if _, done := r.sent[a]; done || next.Less(a.At) || blocked[a.Client] {
			continue
		}
		d := r.clients[a.Client-1]
		if !d.server.IsValid() {
			blocked[a.Client] = true
			continue
		}
		payload := a.Payload
		if a.Kind == Input && d.player > 0 {
			payload = r.input(d, payload)
		}
		r.send(d.conn, payload, d.server)
		r.sent[a] = next
		if a.At.Less(next) {
			r.counts.LateActions++
			at := next
			r.emit(Event{Event: "late", At: &at, Client: a.Client, Action: a})
		}
	}
	for r.next < len(r.rec.Actions) {
		if _, done := r.sent[r.rec.Actions[r.next]]; !done {
			break
		}
		r.next++
	}
}

// input is a recorded input as client d sends it now: with its player
// number. Its level sequence, in the versions whose inputs carry it, stays
// the recorded one: the server reads the input in that level sequence (a
// client that had not yet seen the next level's first piece sent the old
// one, and the server dropped it, as it will again).
func (r *runner) input(d *driven, payload []byte) []byte {
	var p decode.Packet
	if decode.Decode(&p, payload, r.rec.Version) != nil {
		return payload
	}
	q := decode.MustNewKind(r.rec.Version, decode.KindInput)
	q.Values = append(q.Values[:0], p.Values...)
	q.SetRole(decode.RolePlayer, int64(d.player))
	return decode.Encode(nil, q)
}

func (r *runner) summary() *Summary {
	for _, d := range r.clients {
		for k := range d.rec.states {
			if !d.seen[k] && !r.rec.End.Less(k) {
				r.counts.Missing++
			}
		}
	}
	s := &Summary{Counts: r.counts, Clients: len(r.clients), End: r.rec.End, First: r.first, Differ: r.differ}
	for _, a := range r.rec.Actions {
		s.Actions++
		if a.Check == Uncertain {
			s.Uncertain++
		}
	}
	s.Reproduced = s.Different == 0 && s.Missing == 0 && s.Equal > 0
	r.emit(Event{Event: "summary", Summary: s})
	return s
}
