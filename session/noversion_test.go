package session_test

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/futurecap"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// trackFile runs a capture through a tracker and counts its records by
// kind, and the malformed ones whose error is decode.ErrNoVersion.
func trackFile(t *testing.T, path string, force decode.Version) (*session.Tracker, map[session.Kind]int, int) {
	t.Helper()
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := session.NewTracker(force)
	kinds := map[session.Kind]int{}
	noVersion := 0
	for {
		d, err := r.Next()
		if err == io.EOF {
			return tr, kinds, noVersion
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := tr.Process(d)
		kinds[rec.Kind]++
		if rec.Kind == session.Malformed && errors.Is(rec.Err(), decode.ErrNoVersion) {
			noVersion++
		}
	}
}

// A capture of a future version (every stdf header 4 bytes longer, every
// stak a field longer) is of no known version, for its stdf, not a
// 2026-07 game whose every dif is malformed; --era forces the version, and
// then its packets are malformed in it.
func TestFutureVersion(t *testing.T) {
	path := futurecap.Future(t)
	v2607 := decode.MustParseVersion("2026-07")
	for _, tc := range []struct {
		name         string
		force        decode.Version
		version      decode.Version
		unrecognised string
	}{
		{"auto", decode.VersionUnknown, decode.VersionUnknown, "stdf header fits no known version"},
		{"--era 2026-07", v2607, v2607, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr, kinds, noVersion := trackFile(t, path, tc.force)
			convs := tr.Conversations()
			if len(convs) != futurecap.Config().Players {
				t.Fatalf("%d conversations, want %d", len(convs), futurecap.Config().Players)
			}
			for _, c := range convs {
				if c.Version != tc.version || c.Unrecognised != tc.unrecognised {
					t.Errorf("conversation %d: version %v, unrecognised %q; want %v, %q", c.ID, c.Version, c.Unrecognised, tc.version, tc.unrecognised)
				}
			}
			if kinds[session.Malformed] == 0 {
				t.Errorf("no malformed packet: %v", kinds)
			}
			if tc.unrecognised != "" && noVersion == 0 || tc.unrecognised == "" && noVersion != 0 {
				t.Errorf("%d packets that fit no version (errors.Is ErrNoVersion): %v", noVersion, kinds)
			}
		})
	}
}

// No conversation of a real capture is of no known version.
func TestRealCapturesRecognised(t *testing.T) {
	for _, rel := range []string{
		"legacy/basic/capture.pcap", "legacy/lossy/capture.pcap", "modern/basic/basic.pcap", "modern/multi/multi.pcap",
		"aug-2024/basic/capture.pcap", "aug-2024/multi/capture.pcap", "jan-2026/basic/capture.pcap",
		"head-2026-08/basic/capture.pcap", "head-2026-08/multi/capture.pcap", "head-2026-08/lossy_joinfail/capture.pcap",
	} {
		t.Run(rel, func(t *testing.T) {
			tr, kinds, noVersion := trackFile(t, realcap.Path(t, rel), decode.VersionUnknown)
			for _, c := range tr.Conversations() {
				if c.Unrecognised != "" || !c.Version.Known() {
					t.Errorf("conversation %d: version %v, unrecognised %q", c.ID, c.Version, c.Unrecognised)
				}
			}
			if noVersion != 0 {
				t.Errorf("%d packets fit no version: %v", noVersion, kinds)
			}
		})
	}
}

// A future build that changed only the stdf header, every other packet
// still fitting 2026-07, is of no known version from its second stdf to
// its end: judged by the name that fits none, not by the count of all
// packets, it does not flip back and forth as the inputs and acks that
// fit pile up.
func TestFutureStdfOnlyStaysUnrecognised(t *testing.T) {
	cfg := futurecap.Config()
	cfg.Duration = 10 * time.Second
	path := futurecap.Write(t, "future-stdf.pcap", cfg, futurecap.Stdf)
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := session.NewTracker(decode.VersionUnknown)
	told := map[int]bool{} // conversations found of no known version
	flips := map[int]int{} // and then of a version again
	stdfs := map[int]int{} // dif pieces seen per conversation
	for {
		d, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rec := tr.Process(d)
		if rec.Conv == nil {
			continue
		}
		id := rec.Conv.ID
		if decode.KindOf(d.Payload) == decode.KindDifPiece {
			stdfs[id]++
		}
		switch {
		case rec.Conv.Unrecognised != "":
			told[id] = true
		case told[id]:
			flips[id]++
		}
	}
	if len(told) != cfg.Players {
		t.Fatalf("%d conversations found of no known version, want %d", len(told), cfg.Players)
	}
	for id, n := range flips {
		t.Errorf("conversation %d: of a version again after %d later packets (of %d stdf)", id, n, stdfs[id])
	}
}
