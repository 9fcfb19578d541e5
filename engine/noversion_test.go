package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/futurecap"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/synth"
)

// A capture of a future version: each conversation has one no-version
// warning with the reason and the frames of the packets that fit no
// version, and the stats and the health carry the reason; --era 2026-07
// forces the version, and then nothing says so.
func TestFindingsNoVersion(t *testing.T) {
	path := futurecap.Future(t)
	const reason = "stdf header fits no known version"
	for _, tc := range []struct {
		name   string
		work   engine.Work // beside Difs, Counts, Health and Findings
		force  decode.Version
		era    string
		reason string
	}{
		{"auto", 0, decode.VersionUnknown, "unknown", reason},
		// the findings see the later stage's copies of the conversations
		{"auto, indexed", engine.Index | engine.Timeline, decode.VersionUnknown, "unknown", reason},
		{"--era 2026-07", 0, decode.MustParseVersion("2026-07"), "2026-07", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := engine.New(engine.Config{Era: tc.force, Work: tc.work | engine.Difs | engine.Counts | engine.Health | engine.Findings})
			t.Cleanup(func() { e.Close() })
			if err := e.Run(context.Background(), path); err != nil {
				t.Fatal(err)
			}
			st := e.Stats()
			players := futurecap.Config().Players
			if len(st.Convs) != players || len(st.Health) != players {
				t.Fatalf("%d conversations, %d health lines; want %d", len(st.Convs), len(st.Health), players)
			}
			fs := ofKind(e.Findings(), engine.KindNoVersion, 0)
			if tc.reason == "" {
				if len(fs) != 0 {
					t.Errorf("no-version findings with the version forced: %v", fs)
				}
				if note := engine.NoVersionNote(e.Conversations()); note != "" {
					t.Errorf("note with the version forced: %q", note)
				}
			} else if len(fs) != players {
				t.Fatalf("%d no-version findings, want %d: %v", len(fs), players, fs)
			}
			for i, c := range st.Convs {
				if c.Era != tc.era || c.Unrecognised != tc.reason || st.Health[i].Era != tc.era || st.Health[i].Unrecognised != tc.reason {
					t.Errorf("conversation %d: era %q unrecognised %q, health %q %q; want %q %q", c.ID, c.Era, c.Unrecognised, st.Health[i].Era, st.Health[i].Unrecognised, tc.era, tc.reason)
				}
				if tc.reason == "" {
					continue
				}
				f := fs[i]
				ev := f.Evidence
				if f.Conv != c.ID || f.Severity != engine.SeverityWarning || f.Player != *c.Player {
					t.Errorf("finding of conversation %d: conv %d, %s, player %d", c.ID, f.Conv, f.Severity, f.Player)
				}
				for _, want := range []string{"is of no known version: " + reason, "pmdump knows legacy, modern", "--era NAME forces one"} {
					if !strings.Contains(f.Summary, want) {
						t.Errorf("summary %q lacks %q", f.Summary, want)
					}
				}
				if ev.First <= 0 || ev.Worst != ev.First || ev.Last < ev.First || f.Figures["packets"] < 2 || f.Figures["packets"] > f.Figures["conv_packets"] || f.Figures["conv_packets"] != float64(c.Packets) {
					t.Errorf("finding of conversation %d: evidence %+v, figures %v (%d packets)", c.ID, ev, f.Figures, c.Packets)
				}
			}
			if tc.reason != "" {
				note := engine.NoVersionNote(e.Conversations())
				if want := "conversations 1 and 2 are " + engine.NoVersion(reason); note != want {
					t.Errorf("note %q, want %q", note, want)
				}
			}
		})
	}
}

// NoVersionNote names one conversation with its client, several by their
// numbers, each reason once.
func TestNoVersionNote(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Counts})
	t.Cleanup(func() { e.Close() })
	if err := e.Run(context.Background(), futurecap.Write(t, "one.pcap", func() (c synth.Config) {
		c = futurecap.Config()
		c.Players = 1
		return c
	}(), futurecap.Stdf|futurecap.Stak)); err != nil {
		t.Fatal(err)
	}
	convs := e.Conversations()
	if got, want := engine.NoVersionNote(convs), "conversation 1 ("+convs[0].Client.String()+") is "+engine.NoVersion("stdf header fits no known version"); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	convs = append(convs, convs[0], convs[0])
	convs[1].ID, convs[2].ID, convs[2].Unrecognised = 2, 3, "cjon of 30 bytes fits no known version"
	if got, want := engine.NoVersionNote(convs), "conversations 1, 2 and 3 are "+engine.NoVersion("stdf header fits no known version, cjon of 30 bytes fits no known version"); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
	if got := engine.NoVersionNote(nil); got != "" {
		t.Errorf("note of nothing: %q", got)
	}
}

// No clean real capture, of any version, has a conversation of no known
// version.
func TestFindingsNoVersionRealCaptures(t *testing.T) {
	for _, rel := range []string{
		"legacy/basic/capture.pcap", "legacy/lossy/capture.pcap", "modern/basic/basic.pcap", "modern/multi/multi.pcap",
		"aug-2024/basic/capture.pcap", "aug-2024/multi/capture.pcap", "jan-2026/basic/capture.pcap",
		"head-2026-08/basic/capture.pcap", "head-2026-08/multi/capture.pcap", "head-2026-08/lossy_joinfail/capture.pcap",
	} {
		t.Run(rel, func(t *testing.T) {
			e, fs := findingsOf(t, engine.Counts, realcap.Path(t, rel))
			for _, f := range ofKind(fs, engine.KindNoVersion, 0) {
				t.Errorf("%s: %s", f.Kind, f.Summary)
			}
			for _, c := range e.Stats().Convs {
				if c.Unrecognised != "" {
					t.Errorf("conversation %d: %q", c.ID, c.Unrecognised)
				}
			}
		})
	}
}
