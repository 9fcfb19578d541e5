package engine

import (
	"errors"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// Event is one thing the engine found, delivered to Config.OnEvent in
// capture order (see Config.OnEvent for the goroutine). The concrete types
// are PacketEvent, DifEvent, StateEvent, AckEvent, ConversationEvent,
// ProgressEvent and WarningEvent.
type Event interface{ isEvent() }

// PacketEvent is one game packet (clean, malformed or unknown; other UDP is
// only counted). Record is the tracker's and valid only during the call;
// Keep returns a copy the consumer may keep.
type PacketEvent struct {
	Record *session.Record
	// Index is the packet's position in the engine's packet index, -1
	// when the engine keeps none.
	Index int
	// First is the earliest capture time stamp seen so far (of any frame,
	// game or not), the zero point of relative times.
	First time.Time
	// Digits is how many fraction digits of a second the source's time
	// stamps have (6: microseconds, 9: nanoseconds).
	Digits int
	// Datagram is the datagram as the capture layer gave it, with its
	// frame as captured (to write it out again); valid only during the call.
	Datagram *source.Datagram
}

// Packet is a decoded game packet that belongs to its holder: nothing in it
// is reused by the engine.
type Packet struct {
	N        int
	TS       time.Time
	Src, Dst netip.AddrPort
	Kind     session.Kind
	Era      decode.Version
	Dir      decode.Dir
	Conv     int // the conversation's number, 0 when none
	Client   netip.AddrPort
	Player   int // -1 when not known
	Packet   decode.Packet
}

// Keep copies the event's packet.
func (e PacketEvent) Keep() *Packet { return keep(e.Record) }

func keep(r *session.Record) *Packet {
	p := &Packet{N: r.N, TS: r.TS, Src: r.Src, Dst: r.Dst, Kind: r.Kind, Era: r.Version, Dir: r.Dir, Player: r.Player}
	if r.Conv != nil {
		p.Conv, p.Client = r.Conv.ID, r.Conv.Client
	}
	raw := append([]byte(nil), r.Packet.Raw...)
	redecode(&p.Packet, raw, r)
	return p
}

// redecode decodes raw again as the record r was decoded.
func redecode(p *decode.Packet, raw []byte, r *session.Record) {
	if r.Kind == session.Unknown || r.Packet.Layout == nil {
		*p = decode.Packet{Raw: raw, Err: r.Packet.Err}
		copy(p.Name[:], raw)
		return
	}
	if errors.Is(r.Packet.Err, decode.ErrNoVersion) {
		decode.DecodeUnrecognised(p, raw)
		return
	}
	decode.Decode(p, raw, r.Packet.Version)
}

// Dif is one state dif as it ended in the reassembler: its pieces' headers
// and what became of it, without its bytes.
type Dif struct {
	reassemble.Key
	Status     reassemble.Status
	Count      int   // pieces the dif has
	Pieces     int   // distinct pieces received
	Missing    []int // seqs of the missing pieces (Incomplete)
	Truncated  int   // pieces cut by the capture's snap length
	Duplicates int   // pieces received more than once before it ended
	Bytes      int   // compressed bytes received
	FirstN     int   // capture frame number of the first piece received
	LastN      int   // and of the last
	First      time.Time
	Last       time.Time
	Err        error
}

// DifEvent is a dif that ended (complete, incomplete, truncated or
// corrupt), in the order they ended. Its level sequence is inferred for the
// legacy era.
type DifEvent struct{ Dif *Dif }

// StateEvent is one rebuilt (or failed) state, in capture order of its
// dif's last piece. The State is the consumer's to keep; it holds no state
// bytes (Data is nil).
type StateEvent struct{ State *replay.State }

// Ack is one stak: a client acknowledging the state of a frame.
type Ack struct {
	Line  reassemble.Chain
	SLSN  int // the level sequence the client was in (as the engine knows it)
	Frame int32
	N     int // capture frame number of the stak
	TS    time.Time
}

// AckEvent is one acknowledgement, as it was captured.
type AckEvent struct{ Ack Ack }

// ConversationEvent says a conversation started or learned something
// (its era, player, hostname or color). Conv is a copy.
type ConversationEvent struct {
	Conv session.Conversation
	New  bool
}

// ProgressEvent reports how far the engine has read: bytes of the current
// input read and its total size (0 when unknown: a stream or a live
// source), and frames over all inputs.
type ProgressEvent struct {
	Input       string
	Read, Total int64
	Frames      int
	Done        bool // the input was read to its end
}

// WarningEvent is a problem with the input that the run survived.
type WarningEvent struct {
	Message string
	// Unreadable: an input could not be read at all (the run went on with
	// the next).
	Unreadable bool
}

// Events is a set of kinds of events (Config.Events).
type Events uint16

// The kinds of events, one per event type.
const (
	PacketEvents Events = 1 << iota
	DifEvents
	StateEvents
	AckEvents
	ConversationEvents
	ProgressEvents
	WarningEvents
	FindingEvents
)

func (PacketEvent) isEvent()       {}
func (DifEvent) isEvent()          {}
func (StateEvent) isEvent()        {}
func (AckEvent) isEvent()          {}
func (ConversationEvent) isEvent() {}
func (ProgressEvent) isEvent()     {}
func (WarningEvent) isEvent()      {}
