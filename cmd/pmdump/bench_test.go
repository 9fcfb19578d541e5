package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// decodeAll runs a capture held in memory through source → session and
// returns the number of game packets.
func decodeAll(b *testing.B, data []byte) int {
	rd, err := source.NewReader(bytes.NewReader(data), "bench")
	if err != nil {
		b.Fatal(err)
	}
	tr := session.NewTracker(decode.EraUnknown)
	n := 0
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		if r := tr.Process(d); r.Kind == session.Game {
			n++
		}
	}
	return n
}

func benchDecode(b *testing.B, data []byte) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	pkts := 0
	for b.Loop() {
		pkts = decodeAll(b, data)
	}
	b.ReportMetric(float64(pkts)*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}

func realMulti(b *testing.B) []byte {
	data, err := os.ReadFile(filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap"))
	if err != nil {
		b.Skipf("real capture not available: %v", err)
	}
	return data
}

// BenchmarkDecodeReal decodes the real modern/multi capture (14326 packets).
func BenchmarkDecodeReal(b *testing.B) { benchDecode(b, realMulti(b)) }

// BenchmarkReadReal is "pmdump read" on the real modern/multi capture,
// printing one line per packet to io.Discard.
func BenchmarkReadReal(b *testing.B) {
	path := filepath.Join(sharedCaptures, "modern", "multi", "multi.pcap")
	data := realMulti(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if code := run([]string{"read", path}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.ReportMetric(14326*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
}
