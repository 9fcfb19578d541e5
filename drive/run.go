package drive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// Options configure Run.
type Options struct {
	// Wait is how long Run waits for the server's first answer, before
	// the run: drive may be started before the server (or start it, with
	// Exec); 0 means 10 s.
	Wait time.Duration
	// Timeout is how long the server may stay silent (no snfo) during
	// the run before Run gives up; 0 means 5 s.
	Timeout time.Duration
	// MaxTime, when not 0, bounds a run: it then ends with the summary
	// of what was compared.
	MaxTime time.Duration
	// Lead is how many frames before its frame an input is sent when the
	// server will hold it until then (its frame is not before the one the
	// recording has it read in, in the same level sequence): a packet
	// that waits at the server cannot be late. 0 means DefaultLead; a
	// negative Lead sends every packet just before its frame.
	Lead int32
	// Exec, when not empty, is a command line (run by /bin/sh) that
	// starts a fresh game server listening at the target: Run starts it
	// once it has read the recording and opened its sockets, and stops it
	// (its whole process group) when the run ends. ExecOutput receives
	// the server's standard output and error.
	Exec       string
	ExecOutput io.Writer
	// Retries is how many times, with Exec, a diverged run is run again
	// on a fresh server; the summary says how many tries it took.
	Retries int
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
	Clients    int     `json:"clients"`
	Actions    int     `json:"actions"`
	Uncertain  int     `json:"uncertain"`
	End        Key     `json:"end"`
	Reproduced bool    `json:"reproduced"` // every recorded state was sent again, none differed
	Tries      int     `json:"tries"`      // runs made (more than 1 with Options.Retries)
	Margin     *Margin `json:"margin,omitempty"`
	// Cause names lateness when it explains the divergence; Stopped says
	// why a run ended before the recording's end.
	Cause   string      `json:"cause,omitempty"`
	Stopped string      `json:"stopped,omitempty"`
	First   *Divergence `json:"first_divergence,omitempty"`
	Differ  []Differ    `json:"differ,omitempty"` // the first states that differ
}

// Event is one thing a run reports. Event says which: "server" (the
// server first answered: At its frame), "join" (a client joined: Client,
// Player, At), "late" (Action sent after its frame had begun, At the frame
// it was sent in), "progress" (Counts, At), "divergence" (the first state
// that differs), "retry" (a diverged try ended: Summary; another starts),
// "summary".
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
	at   time.Time // when it was read from the socket
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
	// the time the newest snfo arrived, the margins of the packets sent,
	// whether the clock and sending threads run in real time
	clockAt time.Time
	margins margins
	// hurried holds the frames the server began less than half a frame
	// after the one before (catching up: a busy machine), with that gap
	hurried  map[Key]time.Duration
	realtime bool
	// payload holds each input's datagram, encoded with its client's
	// player number once the client joined (by action index)
	payload [][]byte
	early   []bool  // by action index: the server holds it when sent Lead frames early
	late    []Event // late packets, reported after the frame's sends
	// lastFrame is the recording's last state of each level sequence
	lastFrame map[int]int32
	srv       *server
	stopped   string
	advanced  time.Time     // when the clock last showed a new frame
	closing   atomic.Bool   // the run is over: the clock's reader stops
	clockDone chan struct{} // closed when the clock's kernel reader stopped
	// onArrival: the server handles a join when it arrives (see
	// decode.VersionInfo.JoinOnArrival); joinTimer fires half a frame
	// after an snfo when a join is due then
	onArrival bool
	joinTimer *time.Timer
	joinDue   bool
	joinArmed bool // the timer is set: the frame's keep-alive waits for the join
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
// count of requests sent to the server since the clock joined as its
// value.
func (r *runner) keepAlive() {
	p := r.packet(decode.KindRemoteCommand).Set("command", 0).SetFloat("value", float64(r.sentCount))
	r.clock.WriteToUDPAddrPort(decode.Encode(nil, p), r.clockServer)
}

// LateStartError is Run's error when the server was already past the
// frame the recording's first client had to join in when drive first
// heard it: the recorded schedule cannot be kept.
type LateStartError struct {
	Server Key // the server's frame when drive first heard it
	Needed Key // the last frame drive had to hear it in
	Join   Key // the recording's first join
}

func (e *LateStartError) Error() string {
	return fmt.Sprintf("drive: the server was already at frame %d when drive first heard it; the recording's first client joins in frame %d, so drive had to hear the server by frame %d: start drive before the server (it waits for it) or let drive start the server",
		e.Server.Frame, e.Join.Frame, e.Needed.Frame)
}

// Run plays the recording's clients against the server listening at
// target (HOST:PORT) and compares every state it sends with the recorded
// one, until the recording's last state. It returns the summary; the error
// is for a run that could not go on (no server, a server already past the
// first join, a *LateStartError, ctx done: then with the summary of what
// was compared so far). With Options.Exec it starts the server itself,
// and with Options.Retries runs a diverged run again on a fresh one.
func Run(ctx context.Context, rec *Recording, target string, opt Options) (*Summary, error) {
	tries := 1
	if opt.Exec != "" {
		tries += max(opt.Retries, 0)
	}
	for try := 1; ; try++ {
		sum, err := runOnce(ctx, rec, target, opt)
		if sum != nil {
			sum.Tries = try
		}
		if err != nil || sum.Reproduced || try >= tries || ctx.Err() != nil {
			if sum != nil && opt.OnEvent != nil {
				opt.OnEvent(Event{Event: "summary", Summary: sum})
			}
			return sum, err
		}
		if opt.OnEvent != nil {
			opt.OnEvent(Event{Event: "retry", Summary: sum})
		}
	}
}

func runOnce(ctx context.Context, rec *Recording, target string, opt Options) (*Summary, error) {
	ap, err := resolve(target)
	if err != nil {
		return nil, err
	}
	if opt.Wait <= 0 {
		opt.Wait = 10 * time.Second
	}
	if opt.Timeout <= 0 {
		opt.Timeout = 5 * time.Second
	}
	if opt.Lead == 0 {
		opt.Lead = DefaultLead
	}
	if opt.Handshake <= 0 {
		opt.Handshake = 20
	}
	if opt.ProgressEvery <= 0 {
		opt.ProgressEvery = 40
	}
	r := &runner{rec: rec, opt: opt, target: ap, in: make(chan arrival, 8192), clockIn: make(chan arrival, 256),
		sent: make(map[*Action]Key, len(rec.Actions)), margins: newMargins(len(rec.Actions)),
		payload: make([][]byte, len(rec.Actions)), lastFrame: map[int]int32{}}
	if info := rec.Version.Info(); info != nil {
		r.onArrival = info.JoinOnArrival
	}
	r.joinTimer = time.NewTimer(time.Hour)
	r.joinTimer.Stop()
	r.size = rec.stateSize()
	if r.size == 0 {
		return nil, errors.New("drive: the recording has no state")
	}
	for _, c := range rec.Clients {
		for k := range c.states {
			if f, ok := r.lastFrame[k.SLSN]; !ok || k.Frame > f {
				r.lastFrame[k.SLSN] = k.Frame
			}
		}
	}
	r.early = make([]bool, len(rec.Actions))
	for i, a := range rec.Actions {
		r.payload[i] = a.Payload // inputs again with their player number once it joined
		r.early[i] = opt.Lead > 0 && rec.holds(a, opt.Lead)
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
	if opt.Exec != "" {
		// Started before this thread asks for real-time scheduling: a
		// child inherits its parent thread's policy, and the game's
		// server, which spins between frames, must not run in real time.
		if r.srv, err = startServer(opt.Exec, opt.ExecOutput); err != nil {
			return nil, err
		}
	}
	// The loop runs on a thread of its own, in real time when permitted:
	// a packet's margin is what a busy machine eats first.
	r.realtime = lockRealtime()
	defer unlockRealtime(r.realtime)
	r.start = time.Now()
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
	started := make(chan struct{})
	go func() {
		read := c.ReadFromUDPAddrPort
		if who == -1 {
			// The clock's reader in real time too, blocking in the kernel
			// on its own thread: its snfo starts the sends of the next
			// frame.
			defer unlockRealtime(lockRealtime())
			if kr, ok := kernelReader(c); ok {
				read = kr
				r.clockDone = make(chan struct{})
				defer close(r.clockDone)
			}
		}
		close(started)
		for {
			buf := make([]byte, 2048)
			n, from, err := read(buf)
			if who == -1 && r.closing.Load() {
				return
			}
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue // ICMP errors and read timeouts surface here; the loop's timeout decides
			}
			a := arrival{who: who, from: netip.AddrPortFrom(from.Addr().Unmap(), from.Port()), data: buf[:n], at: time.Now()}
			if who == -1 {
				r.clockIn <- a
			} else {
				r.in <- a
			}
		}
	}()
	<-started
	return c, nil
}

func (r *runner) close() {
	if r.srv != nil {
		r.srv.stop()
	}
	// The clock's kernel reader holds the socket's descriptor: it stops
	// (within its read timeout) before the socket closes, so it never
	// reads a descriptor the number was given to again.
	r.closing.Store(true)
	if r.clockDone != nil {
		select {
		case <-r.clockDone:
		case <-time.After(time.Second):
		}
	}
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
	deadline := time.Now().Add(r.opt.Wait)
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
			if err := r.serverExited(); err != nil {
				return err
			}
			if time.Now().After(deadline) {
				if !server.IsValid() {
					return fmt.Errorf("drive: no answer (5678) from a game server at %s within %v", r.target, r.opt.Wait)
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
				r.clockServer, r.sentCount = server, 0 // the keep-alives count from the join on
				return nil
			case decode.KindRemoteInfo:
				r.clockServer, r.sentCount = server, 0
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
		done, err := r.frame(a.data)
		if !r.advanced.IsZero() {
			last = r.advanced // silence is time without a new frame
		}
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
			if err := r.serverExited(); err != nil {
				return err
			}
			if time.Since(last) > r.opt.Timeout {
				return fmt.Errorf("drive: the server at %s sent no frame (snfo) for %v after frame %v", r.target, r.opt.Timeout, r.cur)
			}
			if r.opt.MaxTime > 0 && time.Since(r.start) > r.opt.MaxTime {
				r.stopped = fmt.Sprintf("the run reached its time limit (%v) at frame %v", r.opt.MaxTime, r.cur)
				return nil
			}
		case a := <-r.clockIn:
			if done, err := clock(a); err != nil || done {
				return err
			}
		case <-r.joinTimer.C:
			r.joinDue, r.joinArmed = true, false
			r.sendDue(r.cur.Add(1))
			r.joinDue = false
			r.keepAlive() // a server in lockstep waits for it, so the join is read before its next frame
			r.flushLate()
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
	prev, prevAt := r.cur, r.clockAt
	now := time.Now()
	switch {
	case !r.started:
		r.started = true
		r.clockAt = now
		r.cur = Key{0, n}
		at := r.cur
		r.emit(Event{Event: "server", At: &at})
		if err := r.lateStart(); err != nil {
			return false, err
		}
	case n == r.cur.Frame:
		return false, nil // another piece of the same frame, or the same again
	case n < r.cur.Frame && (n >= levelStart || r.cur.Frame-n <= restartSlack):
		return false, nil // an older snfo, reordered or repeated: not the clock
	case n < r.cur.Frame:
		r.cur = Key{r.cur.SLSN + 1, n} // a new level: frames start again
	default:
		r.cur.Frame = n
	}
	if n == prev.Frame+1 && !prevAt.IsZero() {
		if gap := now.Sub(prevAt); gap < framePeriod/2 && len(r.hurried) < maxHurried {
			if r.hurried == nil {
				r.hurried = map[Key]time.Duration{}
			}
			r.hurried[Key{prev.SLSN, n}] = gap
		}
	}
	r.clockAt, r.advanced = now, now
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
	if !r.joinArmed {
		r.keepAlive()
	}
	r.flushLate()
	if f, ok := r.lastFrame[r.cur.SLSN]; ok && r.cur.Frame > f+giveUp && r.cur.Less(r.rec.End) {
		r.stopped = fmt.Sprintf("diverged past recovery: the server is at frame %v, %d frames past the recording's last state of level sequence %d (frame %d), and the recording goes on to %v",
			r.cur, r.cur.Frame-f, r.cur.SLSN, f, r.rec.End)
		return true, nil
	}
	if r.cur.Frame%r.opt.ProgressEvery == 0 {
		c := r.counts
		at := r.cur
		r.emit(Event{Event: "progress", At: &at, Counts: &c})
	}
	return !r.cur.Less(r.rec.End.Add(1)), nil
}

// flushLate reports the late packets of the sends just made.
func (r *runner) flushLate() {
	for _, ev := range r.late {
		r.emit(ev)
	}
	r.late = r.late[:0]
}

// sendDue sends every action due by frame next, in capture order where
// they are due together; a client's actions wait while it has no server
// socket yet or its join is still to go. An
// input the server will hold until its own frame (Recording.holds) is due
// Lead frames before the frame it is read in, but not in an earlier level
// sequence (the server drops it there); the others just before it.
func (r *runner) sendDue(next Key) {
	var blocked [8]bool // by client; a game has at most 7
	lead := max(r.opt.Lead, 0)
	for i := r.next; i < len(r.rec.Actions); i++ {
		a := r.rec.Actions[i]
		if next.Add(lead).Less(a.Ordered) {
			break
		}
		if _, done := r.sent[a]; done {
			continue
		}
		b := a.Client % len(blocked)
		due, by := a.At, a.At // due: from the snfo of the frame before; by: read in that frame at the latest
		if r.early[i] && a.At.SLSN == next.SLSN {
			due = a.At.Add(-lead)
		}
		wait := false
		if a.Kind == Join && r.onArrival {
			// Handled on arrival: it must come after frame At has run
			// (and sent its states), before the next one: half a frame
			// after the snfo of frame At.
			due, by = a.At.Add(1), a.At.Add(1)
			wait = next == due && !r.joinDue
		}
		d := r.clients[a.Client-1]
		if blocked[b] || next.Less(due) || !d.server.IsValid() || wait {
			if wait && d.server.IsValid() && !blocked[b] {
				r.joinTimer.Reset(time.Until(r.clockAt.Add(framePeriod / 2)))
				r.joinArmed = true
			}
			if a.Kind == Join || !d.server.IsValid() {
				blocked[b] = true // nothing of the client goes before its join
			}
			continue
		}
		r.send(d.conn, r.payload[i], d.server)
		r.margins.add(i, by, r.cur, r.clockAt, time.Now())
		r.sent[a] = next
		if by.Less(next) {
			r.counts.LateActions++
			at := next
			r.late = append(r.late, Event{Event: "late", At: &at, Client: a.Client, Action: a})
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
	s.Margin = r.margins.summary(r.realtime)
	s.Margin.Hurried = len(r.hurried)
	s.Cause, s.Stopped = r.cause(), r.stopped
	return s
}

// levelStart bounds the first frame of a level the clock may show: a new
// level's frames start again at 0, and drive hears its first second.
const levelStart = decode.FrameRate

// giveUp is how many frames past the recording's last state of its level
// sequence the server may go before the run is over: by then the
// recording's next level can no more come as recorded (twice the frames a
// client waits for a state).
const giveUp = 2 * decode.ClientTimeout

// lateStart checks the server's first frame against the schedule: the
// first join must still be to come, with a frame to spare for the
// handshake in the versions that have one.
func (r *runner) lateStart() error {
	first := Key{1 << 30, 0}
	for _, a := range r.rec.Actions {
		if a.At.Less(first) {
			first = a.At
		}
	}
	if first.SLSN != 0 {
		return nil
	}
	need := first.Add(-1) // the snfo of the frame before it starts its sends
	if r.rec.Version.Has(decode.KindHandshake) {
		need = need.Add(-2)
	}
	if need.Less(r.cur) {
		return &LateStartError{Server: r.cur, Needed: need, Join: first}
	}
	return nil
}

// serverExited is the error for a server drive started that has ended.
func (r *runner) serverExited() error {
	if r.srv == nil {
		return nil
	}
	if done, err := r.srv.exited(); done {
		if err != nil {
			return fmt.Errorf("drive: the server drive started has ended (%v)", err)
		}
		return errors.New("drive: the server drive started has ended")
	}
	return nil
}
