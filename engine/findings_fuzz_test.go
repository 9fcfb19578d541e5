package engine_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/fuzzcorpus"
	"github.com/pmdump/pmdump/source"
)

// FuzzFindings feeds the findings alone (the fast pass: packet headers,
// dif headers, acks) hostile datagrams in FuzzEngine's format: no panic,
// and every finding is whole: a known severity, a start not after its
// end, finite figures (JSON has no NaN), a loss never above what was sent.
func FuzzFindings(f *testing.F) {
	for _, s := range findingSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		e := engine.New(engine.Config{Work: engine.Findings})
		defer e.Close()
		runFuzz(e, data)
		for _, fd := range e.Findings() {
			if fd.Severity > engine.SeverityError || fd.End.Before(fd.Start) || fd.Summary == "" {
				t.Fatalf("%+v", fd)
			}
			for k, v := range fd.Figures {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%s: figure %s is %v", fd.Summary, k, v)
				}
			}
			if fd.Kind == engine.KindLoss && fd.Figures["lost"] > fd.Figures["sent"] {
				t.Fatalf("%s: %v lost of %v", fd.Summary, fd.Figures["lost"], fd.Figures["sent"])
			}
			if _, err := json.Marshal(fd.Figures); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// findingSeeds are FuzzFindings' seeds: the first packets of both eras'
// samples (a modern game with pings, a legacy one with sdat, sdak, serr).
func findingSeeds(t testing.TB) map[string][]byte {
	seeds := map[string][]byte{}
	for _, sample := range []string{"modern", "legacy"} {
		e := engine.New(engine.Config{Work: engine.Index})
		if err := e.Run(context.Background(), "sample:"+sample); err != nil {
			t.Fatal(err)
		}
		var dgs []source.Datagram
		x := e.Index()
		for i := 0; i < x.Len() && len(dgs) < 150; i++ {
			p, err := x.Packet(i)
			if err != nil {
				t.Fatal(err)
			}
			dgs = append(dgs, source.Datagram{TS: p.TS, Src: mapEndpoint(p.Src), Dst: mapEndpoint(p.Dst), Payload: p.Packet.Raw})
		}
		e.Close()
		seeds[sample] = fuzzEncode(dgs)
	}
	return seeds
}

// TestFindingsSeedCorpus keeps FuzzFindings' seed files in step.
func TestFindingsSeedCorpus(t *testing.T) {
	fuzzcorpus.Sync(t, "FuzzFindings", findingSeeds(t))
}
