package reassemble_test

import (
	"io"
	"os"
	"sync"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// realDifCaptures are the real captures whose difs the sparse inflater is
// checked on: both eras, with loss.
var realDifCaptures = []string{"modern/multi/multi.pcap", "modern/basic/basic.pcap", "legacy/lossy/capture.pcap"}

var realDifsOnce struct {
	sync.Once
	difs map[string][][]byte
	err  error
}

// realDifs returns the compressed difs of the whole messages of the real
// captures, by capture; it skips when ../shared is absent.
func realDifs(tb testing.TB) map[string][][]byte {
	tb.Helper()
	paths := map[string]string{}
	for _, c := range realDifCaptures {
		paths[c] = realcap.Path(tb, c)
	}
	realDifsOnce.Do(func() {
		realDifsOnce.difs = map[string][][]byte{}
		for name, p := range paths {
			d, err := readDifs(p)
			if err != nil {
				realDifsOnce.err = err
				return
			}
			realDifsOnce.difs[name] = d
		}
	})
	if realDifsOnce.err != nil {
		tb.Fatal(realDifsOnce.err)
	}
	return realDifsOnce.difs
}

// readDifs runs a capture through source → session → reassemble and keeps
// the complete messages' streams.
func readDifs(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd, err := source.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	tr := session.NewTracker(decode.EraUnknown)
	var difs [][]byte
	a := reassemble.New(reassemble.DefaultLimits, func(m *reassemble.Message) {
		if m.Status == reassemble.Complete {
			difs = append(difs, m.Compressed)
		}
	})
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		r := tr.Process(d)
		pk := &r.Packet
		if r.Kind != session.Game || r.Conv == nil || pk.Layout == nil || pk.Layout.Name != "stdf" {
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
	return difs, nil
}
