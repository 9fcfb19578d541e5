// Package realdifs reassembles the difs of a capture for tests, scripts and
// benchmarks that want real ones (reassemble's sparse inflater, replay's
// builder): the capture goes through source, session and reassemble as
// the engine's fast pass would take it, without the engine.
package realdifs

import (
	"fmt"
	"io"
	"os"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// Messages returns every message the reassembler finished from the
// capture at path (complete or not), in the order they ended.
func Messages(path string) ([]*reassemble.Message, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := source.NewReader(f, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := session.NewTracker(decode.VersionUnknown)
	var msgs []*reassemble.Message
	a := reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) { msgs = append(msgs, m) })
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r := tr.Process(d)
		pk := &r.Packet
		if r.Kind != session.Game || r.Conv == nil || pk.Kind() != decode.KindDifPiece {
			continue
		}
		slsn := -1
		if pk.Has("slsn") {
			slsn = int(pk.Int("slsn"))
		}
		a.Add(reassemble.Piece{
			Key: reassemble.Key{Client: r.Conv.Client, SLSN: slsn, Src: int32(pk.Int("src")), Dst: int32(pk.Int("dst"))},
			Seq: int(pk.Int("seq")), Count: int(pk.Int("count")), Start: int(pk.Int("start")),
			Data: pk.Payload(), N: r.N, TS: r.TS,
		})
	}
	a.Flush()
	return msgs, nil
}

// Compressed returns the compressed streams of the complete messages
// among msgs.
func Compressed(msgs []*reassemble.Message) [][]byte {
	var difs [][]byte
	for _, m := range msgs {
		if m.Status == reassemble.Complete {
			difs = append(difs, m.Compressed)
		}
	}
	return difs
}
