package serve

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/statedif"
)

// How the end of a recording is sent again to a client that has not
// acknowledged it.
const (
	endResends = 20                     // times
	endEvery   = 100 * time.Millisecond // apart, at any speed
	// aheadFrames is how far ahead of a legacy client's frame its last
	// state is sent again: a legacy client applies a dif only when its own
	// frame reaches the dif's frame, and counts it late once past.
	aheadFrames = 10
	// fps is the game's frame rate.
	fps = decode.FrameRate
)

type eventKind uint8

const (
	evState  eventKind = iota // a recorded state
	evPacket                  // a recorded packet (sdat)
	evEnd                     // the last state again, if not acknowledged
)

// event is one thing to send at a time.
type event struct {
	at    time.Duration
	kind  eventKind
	state int // index of a state (evState)
	pkt   []byte
}

// events are what the server sends a client, in order, at their times
// since the first state served (the same for every client: New makes them
// once). Without Loop and up to the recording's end,
// the recorded sdat stream goes on to its end (the legacy server's quit
// move is in it), and the last state is sent again until acknowledged.
func (s *Server) events() []event {
	rec := s.rec
	first, last := rec.States[s.opt.Start].At, rec.States[s.opt.Stop-1].At
	toEnd := !s.opt.Loop && s.opt.Stop == len(rec.States)
	var events []event
	for i := s.opt.Start; i < s.opt.Stop; i++ {
		events = append(events, event{at: rec.States[i].At - first, kind: evState, state: i})
	}
	for _, t := range rec.Sdat {
		if t.At >= first && (toEnd || t.At <= last) {
			events = append(events, event{at: t.At - first, kind: evPacket, pkt: t.Payload})
		}
	}
	if !s.opt.Loop {
		for k := 1; k <= endResends; k++ {
			events = append(events, event{at: last - first + time.Duration(float64(k)*float64(endEvery)*s.opt.Speed), kind: evEnd})
		}
	}
	slices.SortStableFunc(events, func(a, b event) int { return cmp.Compare(a.at, b.at) })
	return events
}

// play sends the recording to the client once it has joined, each thing
// only as far as the client's acknowledgements earn it (see Limits).
func (c *client) play() {
	defer c.s.wg.Done()
	s := c.s
	rec := s.rec
	events := s.plan
	span := events[len(events)-1].at + 25*time.Millisecond
	levels := rec.States[s.opt.Stop-1].Level - rec.States[s.opt.Start].Level + 1
	end := rec.States[s.opt.Stop-1]

	sp := newSender(c)
	cur := rec.Cursor()
	origin := time.Now()
	var data []byte
	var slsn int
	var lastState time.Time // when the last recorded state was due
	for round := 0; ; round++ {
		for _, e := range events {
			if e.kind == evEnd && c.has(slsn, end.Frame) {
				continue // the client has the end: no need to wait for it
			}
			due := origin.Add(time.Duration(float64(e.at) / s.opt.Speed))
			if !sleepUntil(c.ctx, due) {
				return
			}
			switch e.kind {
			case evPacket:
				if c.earned() {
					c.sentSdat(e.pkt)
					c.sendOwed(e.pkt)
				}
			case evState:
				var err error
				if data, err = rec.State(e.state, cur); err != nil {
					s.logf("client %s: %v", c.addr, err)
					s.end(c, endFailed)
					return
				}
				st := rec.States[e.state]
				slsn = sp.wire(st.SLSN + round*levels)
				if !rec.Era.LevelSeqOn(decode.KindDifPiece) {
					slsn = st.Level + round*levels // the level sequences counted, to tell them apart
				}
				sp.number = st.Number
				lastState = due
				if c.earned() {
					sp.state(slsn, st.Frame, data, round)
				}
			case evEnd:
				if c.has(slsn, end.Frame) || !c.earned() {
					continue
				}
				frame := end.Frame
				if rec.Era.Sync() == decode.GameMoves {
					frame = c.ahead(end.Frame, lastState, s.opt.Speed)
				}
				sp.state(slsn, frame, data, round)
			}
		}
		if !s.opt.Loop {
			break
		}
		origin = origin.Add(time.Duration(float64(span) / s.opt.Speed))
	}
	c.mu.Lock()
	c.st.Done = true
	c.mu.Unlock()
}

// has reports whether the client acknowledged frame of level sequence slsn
// or a later one.
func (c *client) has(slsn int, frame int32) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.st.AckSLSN == slsn && c.st.AckFrame >= frame
}

// ahead returns the frame at which a legacy client can still take the last
// state: a little ahead of the frame it has reached, estimated from its last
// sdak, or else from the server's own clock since the last state.
func (c *client) ahead(end int32, lastState time.Time, speed float64) int32 {
	now := time.Now()
	est := float64(end) + now.Sub(lastState).Seconds()*fps*speed
	c.mu.Lock()
	if !c.clientFrameAt.IsZero() {
		est = max(est, float64(c.clientFrame)+now.Sub(c.clientFrameAt).Seconds()*fps*speed)
	}
	c.mu.Unlock()
	return max(end+1, int32(est)+aheadFrames)
}

// sleepUntil sleeps until due and reports false if ctx ended first.
func sleepUntil(ctx context.Context, due time.Time) bool {
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// stateSender makes a client's difs with the client's bases, reusing its
// buffers.
type stateSender struct {
	c      *client
	dc     statedif.Compressor
	pkt    []byte
	p      *decode.Packet
	number int32 // the level number of the states being sent (versions whose pieces carry it)
}

func newSender(c *client) *stateSender {
	return &stateSender{c: c, p: decode.MustNewKind(c.s.rec.Era, decode.KindDifPiece)}
}

// wire is the level sequence n as a dif piece carries it: its low 8 bits
// in the versions whose pieces hold a byte of it.
func (sp *stateSender) wire(n int) int {
	if i := sp.p.Layout.FieldByRole(decode.RoleLevelSeq); i >= 0 && sp.p.Layout.Fields[i].Type == decode.U8 {
		return n & 0xff
	}
	return n
}

// state sends one state: it keeps it as a base, makes the dif against the
// client's acknowledged base (zeros if none) and sends its pieces. It
// returns the bytes sent: none when the client has acknowledged that very
// state (a dif from a frame to itself says nothing).
func (sp *stateSender) state(slsn int, frame int32, data []byte, round int) int {
	c := sp.c
	c.mu.Lock()
	if slsn != c.st.SentSLSN || c.st.Sent == 0 {
		// A new level sequence: frames start over, old bases are void.
		c.bases.Reset()
	}
	if src, _, ok := c.bases.Base(); ok && src == frame {
		c.mu.Unlock()
		return 0
	}
	h := c.bases.Add(frame)
	*h = append((*h)[:0], data...)
	src, base, _ := c.bases.Base() // src 0 and no base: zeros
	c.st.Sent++
	c.st.Round = round
	c.st.SentSLSN, c.st.SentAt = slsn, frame
	if src == 0 {
		c.st.Keyframes++
	}
	c.mu.Unlock()

	// The bases change only here: base stays valid outside the lock.
	z, err := sp.dc.Compress(base, data)
	if err != nil {
		return 0
	}
	sent := 0
	statedif.EachPiece(sp.p, statedif.Dif{SLSN: int32(slsn), Src: src, Dst: frame, Level: sp.number}, z, func(_ int, p *decode.Packet) error {
		sp.pkt = decode.Encode(sp.pkt[:0], p)
		sent += c.sendOwed(sp.pkt)
		return nil
	})
	return sent
}
