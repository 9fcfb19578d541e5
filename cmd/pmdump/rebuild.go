package main

import (
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/session"
)

// ack is one stak: a client acknowledging a state.
type ack struct {
	client netip.AddrPort
	slsn   int
	frame  int32
	ts     time.Time
}

// rebuilder runs a pipeline's game packets through reassemble → replay.
type rebuilder struct {
	p         *pipeline
	asm       *reassemble.Assembler
	b         *replay.Builder
	slsn      map[netip.AddrPort]int // a modern client's current level sequence (from stdf/sjon)
	onRecord  func(r *session.Record)
	onAck     func(a ack)
	onMessage func(m *reassemble.Message)
	badPieces int // malformed stdf packets
	convs     map[netip.AddrPort]*session.Conversation
	onRestart func(client netip.AddrPort)
}

func newRebuilder(p *pipeline, opt replay.Options, emit func(*replay.State)) *rebuilder {
	rb := &rebuilder{p: p, slsn: map[netip.AddrPort]int{}, convs: map[netip.AddrPort]*session.Conversation{}}
	rb.b = replay.New(opt, emit)
	rb.asm = reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) {
		if rb.onMessage != nil {
			rb.onMessage(m)
		}
		rb.b.Add(m)
	})
	return rb
}

// run reads the whole capture and rebuilds every state.
func (rb *rebuilder) run() error {
	err := rb.p.run(func(r *session.Record) error {
		if rb.onRecord != nil {
			rb.onRecord(r)
		}
		if r.Kind == session.Malformed && r.Packet.Layout != nil && r.Packet.Layout.Name == "stdf" {
			rb.badPieces++
		}
		if r.Kind != session.Game || r.Conv == nil {
			return nil
		}
		c := r.Conv
		if prev, ok := rb.convs[c.Client]; ok && prev != c {
			// A new session of the same client endpoint: its frames,
			// level sequences and state size start afresh.
			rb.asm.FlushClient(c.Client)
			rb.b.Restart(c.Client)
			if rb.onRestart != nil {
				rb.onRestart(c.Client)
			}
			delete(rb.slsn, c.Client)
		}
		rb.convs[c.Client] = c
		if c.Player >= 0 {
			rb.b.SetPlayer(c.Client, c.Player)
		}
		pk := &r.Packet
		switch pk.Layout.Name {
		case "stdf":
			slsn := -1 // legacy: inferred by the builder
			if r.Era == decode.Modern || pk.Has("slsn") {
				slsn = int(pk.Int("slsn"))
				rb.slsn[c.Client] = slsn
			}
			rb.asm.Add(reassemble.Piece{
				Key: reassemble.Key{Client: c.Client, SLSN: slsn, Src: int32(pk.Int("src")), Dst: int32(pk.Int("dst"))},
				Seq: int(pk.Int("seq")), Count: int(pk.Int("count")), Start: int(pk.Int("start")),
				Data: pk.Payload(), N: r.N, TS: r.TS,
			})
		case "sjon":
			rb.slsn[c.Client] = int(pk.Int("slsn"))
		case "stak":
			if rb.onAck != nil {
				fr, _ := pk.Frame()
				rb.onAck(ack{client: c.Client, slsn: rb.slsn[c.Client], frame: int32(fr), ts: r.TS})
			}
		}
		return nil
	})
	rb.asm.Flush()
	rb.b.Close()
	if rb.badPieces > 0 {
		rb.p.warnf("%d stdf pieces are malformed or cut by the capture's snap length; the difs they belong to cannot be rebuilt (capture with -s 0)", rb.badPieces)
	}
	return err
}
