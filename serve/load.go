// Package serve plays the server side of a recorded game to live game
// clients: it answers their handshake and join as the game's server does and
// sends them the states one player received in the recording, at their
// recorded times, each as a dif against the newest state that live client has
// acknowledged, compressed and split into stdf pieces as the game does.
//
// Load reads the recording from a capture with the engine (the analysis
// every front end shares); a Server then serves it to any number of clients at once, each
// with its own bases.
package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/statedif"
)

// LoadOptions choose what Load takes from a capture.
type LoadOptions struct {
	// Player is the player whose states are served; -1 takes the player
	// of the conversation Conv.
	Player int
	// Conv, when not 0, picks the conversation by its number (as pmdump
	// stats lists them); otherwise Player must have states in one
	// conversation only (an *engine.AmbiguousError lists them).
	Conv int
	// Era forces the protocol era (decode.VersionUnknown infers it).
	Era decode.Version
}

// State is one recorded state of the served player.
type State struct {
	SLSN  int // level sequence (inferred in the legacy era)
	Level int // 0 for the first level sequence of the recording, then 1, 2 …
	// Number is the number of the level the server had loaded, in the
	// versions whose pieces carry it (0 in the others).
	Number int32
	Frame  int32         // game frame
	At     time.Duration // capture time of its dif's last piece, since the recording's origin
	Sum    [32]byte      // sha256 of the state
}

// Timed is a recorded server packet other than a state (the legacy sdat
// stream), with its time since the recording's origin.
type Timed struct {
	At      time.Duration
	Payload []byte
}

// Recording is what one player was sent in a captured game: the join reply,
// every state rebuilt from the capture in frame order within each level
// sequence, and in the legacy era the sdat stream. States are held as
// compressed differences from the one before, so a long game stays small.
type Recording struct {
	Era     decode.Version
	Player  int
	Conv    int            // the conversation's number
	Client  netip.AddrPort // the recorded client's endpoint
	Join    []byte         // the recorded join reply (sjon/SJON), nil if the capture has none
	States  []State
	Sdat    []Timed
	Size    int // state size in bytes
	Skipped int // states that could not be rebuilt or came after a newer one
	Levels  int // level sequences in the recording

	deltas [][]byte // deflate of (previous state − state), zeros before the first
	cache  cache    // recently decoded states, shared by the clients
}

// cacheSize is how many decoded states the clients share.
const cacheSize = 64

// cache holds recently decoded states: clients watching at about the same
// time decode each state once between them. Cached bytes are never changed.
type cache struct {
	mu   sync.Mutex
	ring [cacheSize]struct {
		i    int
		data []byte
	}
}

func (c *cache) get(i int) []byte {
	if i < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := &c.ring[i%cacheSize]; e.data != nil && e.i == i {
		return e.data
	}
	return nil
}

func (c *cache) put(i int, data []byte) {
	c.mu.Lock()
	c.ring[i%cacheSize].i, c.ring[i%cacheSize].data = i, data
	c.mu.Unlock()
}

// State returns state i (which must not be changed), decoding it with cur
// unless another client has just done so.
func (r *Recording) State(i int, cur *Cursor) ([]byte, error) {
	if d := r.cache.get(i); d != nil {
		return d, nil
	}
	if prev := r.cache.get(i - 1); prev != nil {
		if err := cur.inflate(i); err != nil {
			return nil, err
		}
		d := make([]byte, len(prev))
		statedif.Sub(d, prev, cur.delta[:len(prev)])
		r.cache.put(i, d)
		return d, nil
	}
	if err := cur.Seek(i); err != nil {
		return nil, err
	}
	_, data, err := cur.Next()
	if err != nil {
		return nil, err
	}
	d := bytes.Clone(data)
	r.cache.put(i, d)
	return d, nil
}

// InputError is an input that could not be read.
type InputError struct {
	Name string
	Err  error
}

func (e *InputError) Error() string { return fmt.Sprintf("cannot read %s: %v", e.Name, e.Err) }

// Unwrap returns the reason.
func (e *InputError) Unwrap() error { return e.Err }

// Load reads the captures in order as one capture (file names, "-" or
// "sample:NAME", as engine.OpenInput takes them) and returns the recording
// of one player.
func Load(inputs []string, opt LoadOptions) (*Recording, error) {
	if opt.Player < 0 && opt.Conv == 0 {
		return nil, errors.New("a player or a conversation is needed")
	}
	l := &loader{rec: &Recording{Player: opt.Player}, opt: opt}
	sel := engine.Selector{Conv: opt.Conv, Player: opt.Player}
	if opt.Conv != 0 {
		sel.Player = -1
	}
	e := engine.New(engine.Config{
		Era: opt.Era, Work: engine.States, Select: &sel, SHA256: true,
		// The served player's states, kept as the rebuild makes them.
		Inspect: func(s *replay.State, _, state []byte) { s.Extra = bytes.Clone(state) },
		OnEvent: func(ev engine.Event) {
			switch ev := ev.(type) {
			case engine.PacketEvent:
				if r := ev.Record; r.Kind == session.Game && r.Conv != nil {
					l.record(r)
				}
			case engine.StateEvent:
				st := ev.State
				if st.Status == replay.OK && opt.Conv == 0 && st.Player == opt.Player {
					l.seen(reassemble.Chain{Conv: st.Conv, Client: st.Client})
				}
				if l.conv != nil && st.Conv == l.conv.ID {
					l.add(st)
				}
			}
		},
	})
	defer e.Close()
	err := e.Run(context.Background(), inputs...)
	if errors.Is(err, engine.ErrUnreadable) {
		st := e.Stats()
		name := strings.Join(inputs, ", ")
		if len(st.Unreadable) > 0 {
			name = st.Unreadable[0]
		}
		return nil, &InputError{name, err}
	}
	if err != nil {
		return nil, err
	}
	rec := l.rec
	if l.conv == nil {
		var have []string
		for _, c := range e.Conversations() {
			have = append(have, fmt.Sprintf("%d (player %d)", c.ID, c.Player))
		}
		want := fmt.Sprintf("player %d", opt.Player)
		if opt.Conv != 0 {
			want = fmt.Sprintf("conversation %d", opt.Conv)
		}
		return nil, fmt.Errorf("no %s in the capture; conversations: %s", want, strings.Join(have, ", "))
	}
	if len(l.lines) > 1 {
		return nil, &engine.AmbiguousError{Sel: sel, Candidates: l.lines}
	}
	if len(rec.States) == 0 {
		return nil, fmt.Errorf("conversation %d (player %d) has no state that could be rebuilt", rec.Conv, rec.Player)
	}
	// The conversation's version as the whole capture settled it (its
	// state size tells some versions apart), unless one was forced.
	for _, c := range e.Conversations() {
		if c.ID == rec.Conv && c.Version.Known() && opt.Era == decode.VersionUnknown {
			rec.Era = c.Version
		}
	}
	return rec, nil
}

type loader struct {
	lines  []reassemble.Chain // the conversations with states of the player asked for
	rec    *Recording
	opt    LoadOptions
	conv   *session.Conversation
	origin time.Time
	prev   []byte
	zw     *flate.Writer
	buf    bytes.Buffer
	slsn   int // level sequence of the last state kept
	frame  int32
	number map[int]int32 // the level number the pieces of each level sequence carry
}

// seen notes a conversation with states of the player asked for.
func (l *loader) seen(line reassemble.Chain) {
	if !slices.Contains(l.lines, line) {
		l.lines = append(l.lines, line)
	}
}

// record takes one game packet of the capture.
func (l *loader) record(r *session.Record) {
	c := r.Conv
	if l.conv == nil {
		if l.opt.Conv != 0 && c.ID != l.opt.Conv || l.opt.Conv == 0 && c.Player != l.opt.Player {
			return
		}
		l.conv = c
		l.rec.Conv, l.rec.Client = c.ID, c.Client
	}
	if c.ID != l.conv.ID {
		return
	}
	if l.origin.IsZero() {
		l.origin = r.TS
	}
	if l.rec.Era == decode.VersionUnknown {
		l.rec.Era = r.Version
	}
	if c.Player >= 0 {
		l.rec.Player = c.Player
	}
	pk := &r.Packet
	switch pk.Layout.Kind {
	case decode.KindJoinReply:
		if l.rec.Join == nil {
			l.rec.Join = bytes.Clone(pk.Raw)
		}
	case decode.KindGameMoves:
		l.rec.Sdat = append(l.rec.Sdat, Timed{At: r.TS.Sub(l.origin), Payload: bytes.Clone(pk.Raw)})
	case decode.KindDifPiece:
		if n, ok := pieceLevel.Int(pk); ok {
			slsn, _ := pieceSLSN.Int(pk)
			if l.number == nil {
				l.number = map[int]int32{}
			}
			if len(l.number) < 1<<16 {
				l.number[int(slsn)] = int32(n)
			}
		}
	}
}

// The level sequence and level number of a dif piece, where the version's
// pieces carry them.
var (
	pieceSLSN  = decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleLevelSeq)
	pieceLevel = decode.MustKindRoleRef(decode.KindDifPiece, decode.RoleLevel)
)

// add keeps one rebuilt state.
func (l *loader) add(s *replay.State) {
	rec := l.rec
	data, _ := s.Extra.([]byte)
	if s.Status != replay.OK || data == nil {
		rec.Skipped++
		return
	}
	level := 0
	if n := len(rec.States); n > 0 {
		level = rec.States[n-1].Level
		if s.SLSN != l.slsn {
			level++
		} else if s.Dst <= l.frame {
			rec.Skipped++ // overtaken by a newer state: no client applies it
			return
		}
	}
	at := s.TS.Sub(l.origin)
	if n := len(rec.States); n > 0 && at < rec.States[n-1].At {
		at = rec.States[n-1].At
	}
	if rec.Size == 0 {
		rec.Size = len(data)
	}
	// The delta from the previous state, or from zeros.
	base := l.prev
	if len(base) != len(data) {
		base = make([]byte, len(data))
	}
	delta := make([]byte, len(data))
	statedif.Sub(delta, base, data)
	l.buf.Reset()
	if l.zw == nil {
		l.zw, _ = flate.NewWriter(&l.buf, flate.BestSpeed)
	} else {
		l.zw.Reset(&l.buf)
	}
	l.zw.Write(delta)
	l.zw.Close()
	rec.deltas = append(rec.deltas, bytes.Clone(l.buf.Bytes()))
	rec.States = append(rec.States, State{SLSN: s.SLSN, Level: level, Number: l.number[s.SLSN], Frame: s.Dst, At: at, Sum: s.Sum})
	rec.Levels = level + 1
	l.prev = data
	l.slsn, l.frame = s.SLSN, s.Dst
}

// Find returns the index of the first state at or after frame n of level
// sequence slsn, or -1.
func (r *Recording) Find(slsn int, n int32) int {
	for i, s := range r.States {
		if s.SLSN == slsn && s.Frame >= n {
			return i
		}
	}
	return -1
}

// Cursor reads a recording's states one after the other.
type Cursor struct {
	r     *Recording
	next  int
	state []byte
	delta []byte
	fr    io.ReadCloser
}

// Cursor returns a cursor before the first state.
func (r *Recording) Cursor() *Cursor { return &Cursor{r: r} }

// Index is the index of the state Next returns next.
func (c *Cursor) Index() int { return c.next }

// Next returns the next state's bytes (valid until the following call) and
// its index, or io.EOF after the last one.
func (c *Cursor) Next() (int, []byte, error) {
	if c.next >= len(c.r.States) {
		return c.next, nil, io.EOF
	}
	i := c.next
	if err := c.inflate(i); err != nil {
		return i, nil, err
	}
	if len(c.state) != c.r.Size {
		c.state = make([]byte, c.r.Size)
	}
	statedif.Sub(c.state, c.state, c.delta[:c.r.Size])
	c.next++
	return i, c.state, nil
}

// inflate inflates the stored delta of state i into c.delta.
func (c *Cursor) inflate(i int) error {
	z := bytes.NewReader(c.r.deltas[i])
	if c.fr == nil {
		c.fr = flate.NewReader(z)
	} else {
		c.fr.(flate.Resetter).Reset(z, nil)
	}
	size := c.r.Size
	if cap(c.delta) < size+1 {
		c.delta = make([]byte, size+1)
	}
	c.delta = c.delta[:size+1]
	n, err := io.ReadFull(c.fr, c.delta)
	if err != io.ErrUnexpectedEOF || n != size {
		return fmt.Errorf("state %d: stored delta is damaged (%d bytes, %v)", i, n, err)
	}
	return nil
}

// Seek makes Next return state i next.
func (c *Cursor) Seek(i int) error {
	if i < c.next {
		c.next = 0
		clear(c.state)
	}
	for c.next < i {
		if _, _, err := c.Next(); err != nil {
			return err
		}
	}
	return nil
}
