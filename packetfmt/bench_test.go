package packetfmt_test

import (
	"bytes"
	"io"
	"os"
	"syscall"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/packetfmt"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// records decodes every game packet of a real capture and keeps copies of
// the records, for formatting them again and again.
func records(b *testing.B, rel string) []session.Record {
	data, err := os.ReadFile(realcap.Path(b, rel))
	if err != nil {
		b.Fatal(err)
	}
	rd, err := source.NewReader(bytes.NewReader(data), rel)
	if err != nil {
		b.Fatal(err)
	}
	tr := session.NewTracker(decode.VersionUnknown)
	var out []session.Record
	for {
		d, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		r := tr.Process(d)
		if r.Kind == session.NonGame {
			continue
		}
		// The record's packet aliases the reader's buffer: decode a
		// copy of its bytes again, in the era it was decoded in.
		c := *r
		c.Packet = decode.Packet{}
		era := r.Version
		if r.Packet.Layout != nil {
			era = r.Packet.Version
		}
		decode.Decode(&c.Packet, bytes.Clone(r.Packet.Raw), era)
		out = append(out, c)
	}
	return out
}

// BenchmarkLineAppend formats every game packet of the real modern/multi
// capture in read's one-line form: the formatting part of pmdump read.
func BenchmarkLineAppend(b *testing.B) {
	recs := records(b, "modern/multi/multi.pcap")
	var l packetfmt.Line
	l.T0 = recs[0].TS
	buf := make([]byte, 0, 1<<16)
	n := 0
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		for i := range recs {
			buf = l.Append(buf[:0], &recs[i])
			n += len(buf)
		}
	}
	b.SetBytes(int64(n / b.N))
	b.ReportMetric(float64(len(recs))*float64(b.N)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(len(recs)*b.N), "cpu-ns/packet")
}

// cpuTime is the CPU time (user and system) the process has used so far,
// in nanoseconds: on a busy machine it says more than the wall time.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
