package captures_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	{"2026-07", "2026-07.pcapng", synth.Config{Era: decode.MustParseVersion("2026-07"), Players: 2, Duration: 5 * time.Second, Loss: 0.02, Seed: 1}, synth.Pcapng},
}

// TestBundle checks that the bundle is the table above, in its order, and
// that its last sample is of the newest version, as "sample:newest" says.
func TestBundle(t *testing.T) {
	if len(captures.Bundle) != len(samples) {
		t.Fatalf("%d bundled samples, %d made by gen.go", len(captures.Bundle), len(samples))
	}
	for i, s := range samples {
		if b := captures.Bundle[i]; b.Name != s.name || b.File != s.file {
			t.Errorf("sample %d is %+v, want %s in %s", i, b, s.name, s.file)
		}
		if s.name != s.cfg.Era.String() {
			t.Errorf("sample %s is a game of version %s: a sample is named by its version", s.name, s.cfg.Era)
		}
	}
	if last := samples[len(samples)-1].cfg.Era; last != decode.Newest {
		t.Errorf("the newest sample is of version %s, the newest version is %s", last, decode.Newest)
	}
	newest, err := captures.Sample(captures.Newest)
	if err != nil {
		t.Fatal(err)
	}
	last, _ := captures.Sample(samples[len(samples)-1].name)
	if !bytes.Equal(newest, last) {
		t.Errorf("sample:%s is not the sample of the newest version", captures.Newest)
	}
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
			// Every kind of packet the version's game sends in a clean
			// game of two clients is there.
			var want []string
			for _, k := range []decode.Kind{decode.KindHandshake, decode.KindJoinRequest, decode.KindJoinReply, decode.KindInput, decode.KindDifPiece, decode.KindDifAck, decode.KindGameMoves, decode.KindProbe} {
				for _, l := range s.cfg.Era.Layouts() {
					if l.Kind == k && !slices.Contains(want, l.Name) {
						want = append(want, l.Name)
					}
				}
			}
			if len(want) < 5 {
				t.Fatalf("version %s has only %v", s.cfg.Era, want)
			}
			if s.cfg.Era.Sync() == decode.Rewind && (!slsn[0] || !slsn[1]) {
				t.Errorf("no level change: slsn values %v", slsn)
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
