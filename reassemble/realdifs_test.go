package reassemble_test

import (
	"sync"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/internal/realdifs"
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

// readDifs keeps the streams of a capture's complete messages.
func readDifs(path string) ([][]byte, error) {
	msgs, err := realdifs.Messages(path)
	return realdifs.Compressed(msgs), err
}
