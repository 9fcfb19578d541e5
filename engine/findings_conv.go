package engine

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
)

// transfer is one file sent to a client in sfil pieces.
type transfer struct {
	id                     int64
	count, size            int
	pieces, bytes          int
	firstN, lastN, ackN    int
	firstTS, lastTS, ackTS time.Time
}

// filePiece follows the sfil pieces of a file transfer.
func (fc *findingCollector) filePiece(w *convWatch, r *session.Record) {
	pk := &r.Packet
	id := refInt(fileID, pk)
	if w.files == nil {
		w.files = map[int64]*transfer{}
	}
	t := w.files[id]
	if t == nil {
		if len(w.files) >= 64 {
			return
		}
		t = &transfer{id: id, count: int(refInt(filePieces, pk)), size: int(refInt(fileSize, pk)), firstN: r.N, firstTS: r.TS}
		w.files[id] = t
		w.fileOrder = append(w.fileOrder, id)
	}
	t.pieces++
	t.bytes += int(refInt(filePieceSize, pk))
	t.lastN, t.lastTS = r.N, r.TS
}

// newConversation reports how a conversation began: a rejoin of a known
// endpoint, two games sharing one, or a capture that starts mid-game.
func (fc *findingCollector) newConversation(w *convWatch, r *session.Record) {
	v := evidence{}
	v.add(r.N, r.TS, 0)
	if prev := fc.byEnd[w.client]; prev != nil && prev != w {
		w.prev, w.prevN, w.prevTS = prev, r.N, r.TS // judged once the era is known
	}
	fc.byEnd[w.client] = w
	switch r.Packet.Kind() {
	case decode.KindHandshake, decode.KindHandshakeReply, decode.KindJoinRequest, decode.KindJoinReply:
		return
	}
	f := fc.finding(w, KindMidGame, SeverityInfo, v, "%s: no handshake in the capture, its first packet is %s (the capture starts mid-game)", w.who(), r.Packet.NameString())
	fc.found(f)
}

// sameEndpoint reports a conversation that reuses the client endpoint of
// an earlier one: a rejoin, or another game (another era, another server,
// or time going back: a second capture read after the first).
func (fc *findingCollector) sameEndpoint(w *convWatch) {
	prev := w.prev
	w.prev = nil
	v := evidence{}
	v.add(w.prevN, w.prevTS, 0)
	switch {
	case prev.era != w.era:
		fc.found(fc.finding(w, KindSharedEndpoint, SeverityWarning, v, "%s plays %s after conversation %d played %s: two games in one capture share this client endpoint", w.client, w.era, prev.conv, prev.era))
	case prev.server.Addr() != w.server.Addr() && w.server.IsValid() && prev.server.IsValid():
		fc.found(fc.finding(w, KindSharedEndpoint, SeverityWarning, v, "%s talks to a second server %s (conversation %d talked to %s): two games in one capture share this client endpoint", w.client, w.server.Addr(), prev.conv, prev.server.Addr()))
	case w.prevTS.Before(prev.last):
		fc.found(fc.finding(w, KindSharedEndpoint, SeverityWarning, v, "%s starts again at a time before conversation %d's last packet: two games in one capture share this client endpoint", w.client, prev.conv))
	default:
		f := fc.finding(w, KindRejoin, SeverityInfo, v, "%s shook hands again: conversation %d starts (conversation %d's last packet was frame %d)", w.client, w.conv, prev.conv, prev.lastN)
		f.Figures["previous_conv"] = float64(prev.conv)
		fc.found(f)
	}
}

// outage reports a time when nothing went either way between a client
// and the server, then the game went on.
func (fc *findingCollector) outage(w *convWatch, from, to time.Time, fromN, toN int) {
	d := sub(to, from)
	sev := SeverityInfo
	if d >= DropAfter {
		sev = SeverityError
	}
	v := evidence{first: fromN, worst: toN, last: toN, start: from, end: to}
	f := fc.finding(w, KindOutage, sev, v, "nothing went between %s and the server for %.1f s (%d frames), then the game went on", w.who(), d.Seconds(), int(d.Seconds()*GameFPS))
	f.Figures["seconds"] = d.Seconds()
	w.outFrom, w.outTo = from, to
	fc.found(f)
}

// silence reports a silence of one side while the other kept sending.
func (fc *findingCollector) silence(w *convWatch, kind string, from, to time.Time, fromN, toN int, g gap, atEnd bool) {
	d := sub(to, from)
	if d < SilentAfter {
		return
	}
	// An outage of both directions said most of it already.
	lo, hi := from, to
	if w.outFrom.After(lo) {
		lo = w.outFrom
	}
	if w.outTo.Before(hi) {
		hi = w.outTo
	}
	if hi.Sub(lo) > d*4/5 {
		return
	}
	sev := SeverityInfo
	if d >= DropAfter {
		sev = SeverityError
	}
	v := evidence{first: fromN, worst: g.firstN, last: toN, start: from, end: to}
	if v.worst == 0 {
		v.worst = fromN
	}
	until := "then sent again"
	if atEnd {
		until = "until the capture ends"
	}
	var f *Finding
	if kind == KindSilentClient {
		f = fc.finding(w, kind, sev, v, "%s sent nothing for %.1f s (%d frames) while the server sent %d packets (%d difs, %d keyframes, %d bytes); %s",
			w.who(), d.Seconds(), int(d.Seconds()*GameFPS), g.packets, g.difs, g.keyframes, g.bytes, until)
		f.Figures["difs"], f.Figures["keyframes"], f.Figures["bytes"] = float64(g.difs), float64(g.keyframes), float64(g.bytes)
	} else {
		f = fc.finding(w, kind, sev, v, "the server sent nothing to %s for %.1f s (%d frames) while the client sent %d packets; %s",
			w.who(), d.Seconds(), int(d.Seconds()*GameFPS), g.packets, until)
	}
	f.Figures["seconds"], f.Figures["packets"] = d.Seconds(), float64(g.packets)
	f.Evidence.Frames = append([]FrameRange(nil), g.frames...)
	fc.found(f)
}

// The legacy sdat player-state values that end a player.
const (
	sdatQuit     = 64
	sdatDropSync = 70
	sdatDropAck  = 71
)

// sdat reads the legacy game-move entries that end a player: quit (64) and
// dropped (70: sync over 100 frames, 71: no sdak for 100 frames).
func (fc *findingCollector) sdat(w *convWatch, r *session.Record) {
	pk := &r.Packet
	if len(pk.Entries) == 0 || pk.Layout == nil {
		return
	}
	gi := pk.Layout.Field("entries")
	if gi < 0 {
		return
	}
	sub := len(pk.Layout.Fields[gi].Sub)
	if sub != 4 {
		return
	}
	for i := 0; i+4 <= len(pk.Entries); i += 4 {
		frame, typ, player, val := pk.Entries[i].Int, pk.Entries[i+1].Int, pk.Entries[i+2].Int, pk.Entries[i+3].Int
		if typ != 1 || (val != sdatQuit && val != sdatDropSync && val != sdatDropAck) {
			continue
		}
		key := fmt.Sprintf("sdat %s %d %d", w.server.Addr(), player, val)
		if w.reported[key] {
			continue
		}
		// Every conversation of the game gets the entry: report it once.
		dup := false
		for _, id := range fc.order {
			if o := fc.convs[id]; o.server.Addr() == w.server.Addr() && o.reported[key] {
				dup = true
			}
		}
		w.reported[key] = true
		if dup {
			continue
		}
		v := evidence{}
		v.add(r.N, r.TS, 0)
		var f *Finding
		switch val {
		case sdatQuit:
			if player == 0 {
				f = fc.finding(w, KindLeave, SeverityInfo, v, "the server (player 0) quit at frame %d: the game ended (game-move entry: state 64)", frame)
			} else {
				f = fc.finding(w, KindLeave, SeverityInfo, v, "player %d quit at frame %d (game-move entry: state 64)", player, frame)
			}
		case sdatDropSync:
			f = fc.finding(w, KindDropped, SeverityError, v, "the server dropped player %d at frame %d: out of sync by more than 100 frames (game-move entry: state 70)", player, frame)
		default:
			f = fc.finding(w, KindDropped, SeverityError, v, "the server dropped player %d at frame %d: no sdak for 100 frames (game-move entry: state 71)", player, frame)
		}
		f.Player = int(player)
		if o := fc.playerConv(w.server.Addr(), int(player)); o != nil {
			f.Conv, f.Client = o.conv, o.client
			o.reported["quit"] = true
		}
		f.Figures["frame"], f.Figures["state"] = float64(frame), float64(val)
		fc.found(f)
	}
}

func (fc *findingCollector) playerConv(server netip.Addr, player int) *convWatch {
	var out, failed *convWatch
	nFailed := 0
	for _, id := range fc.order {
		o := fc.convs[id]
		if o.server.Addr() != server {
			continue
		}
		if o.player == player {
			out = o
		}
		if o.player < 0 && !o.joinSeen && len(o.joinAsks) > 0 {
			failed = o
			nFailed++
		}
	}
	if out == nil && nFailed == 1 {
		// No conversation has that player, and one asked to join without
		// a reply: the server took it as that player.
		failed.player = player
		out = failed
	}
	return out
}
