package captures_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/synth"
)

// samples are the configurations of the go:generate lines in gen.go.
var samples = []struct {
	name, file string
	cfg        synth.Config
	format     synth.Format
}{
	{"legacy", "legacy.pcap", synth.Config{Era: decode.Legacy, Players: 2, Duration: 6 * time.Second, Seed: 1}, synth.Pcap},
	{"modern", "modern.pcapng", synth.Config{Era: decode.Modern, Players: 2, Duration: 5 * time.Second, Loss: 0.02, Seed: 1}, synth.Pcapng},
}

func TestSample(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			data, err := captures.Sample(s.name)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 || len(data) > 1500000 {
				t.Fatalf("sample is %d bytes", len(data))
			}
			rd, err := source.NewReader(bytes.NewReader(data), s.name)
			if err != nil {
				t.Fatal(err)
			}
			if rd.Format() != s.format.String() {
				t.Errorf("format %s, want %s", rd.Format(), s.format)
			}
			tr := session.NewTracker(decode.VersionUnknown)
			names := map[string]int{}
			slsn := map[int64]bool{}
			for {
				d, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				r := tr.Process(d)
				if r.Kind != session.Game {
					t.Fatalf("frame %d: %v: %v", d.N, r.Kind, r.Err())
				}
				names[r.Packet.NameString()]++
				if r.Packet.NameString() == "stdf" && r.Packet.Has("slsn") {
					slsn[r.Packet.Int("slsn")] = true
				}
			}
			convs := tr.Conversations()
			if len(convs) != 2 {
				t.Fatalf("%d conversations", len(convs))
			}
			for _, c := range convs {
				if c.Version != s.cfg.Era {
					t.Errorf("conversation %d era %v, want %v", c.ID, c.Version, s.cfg.Era)
				}
			}
			want := []string{"1234", "5678", "cdat", "stdf", "stak"}
			if s.cfg.Era == decode.Legacy {
				want = append(want, "CJON", "SJON", "sdat", "sdak", "serr")
			} else {
				want = append(want, "cjon", "sjon", "ping", "pong", "pang")
				if !slsn[0] || !slsn[1] {
					t.Errorf("no level change: slsn values %v", slsn)
				}
			}
			for _, n := range want {
				if names[n] == 0 {
					t.Errorf("no %s packet in the sample (%v)", n, names)
				}
			}
		})
	}
	if _, err := captures.Sample("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown sample: error %v", err)
	}
	a, _ := captures.Sample("legacy")
	a[0] ^= 0xff
	if b, _ := captures.Sample("legacy"); b[0] == a[0] {
		t.Error("Sample returns the embedded bytes themselves")
	}
}

// TestSamplesUpToDate regenerates the samples and their ground truth and
// compares them with the files: they must be what gen.go makes.
func TestSamplesUpToDate(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, s.file)
			var buf bytes.Buffer
			cw, err := synth.NewCaptureWriter(&buf, s.format)
			if err != nil {
				t.Fatal(err)
			}
			truth := synth.NewTruth(s.cfg)
			if _, err := synth.Generate(s.cfg, cw, truth); err != nil {
				t.Fatal(err)
			}
			if err := cw.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := truth.WriteCSV(path); err != nil {
				t.Fatal(err)
			}
			embedded, _ := captures.Sample(s.name)
			if !bytes.Equal(buf.Bytes(), embedded) {
				t.Fatalf("%s is out of date: run go generate ./captures", s.file)
			}
			server, clients := synth.TruthPaths(path, s.cfg.Players)
			for _, p := range append([]string{server}, clients...) {
				got, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				have, err := os.ReadFile(filepath.Base(p))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, have) {
					t.Errorf("%s is out of date: run go generate ./captures", filepath.Base(p))
				}
			}
		})
	}
}
