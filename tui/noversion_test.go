package tui

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/futurecap"
)

// A capture of a future version: the health view names each
// conversation's version "unknown version" and says why; the findings view
// lists its no-version warnings. With the version forced neither says so.
func TestNoVersionShown(t *testing.T) {
	path := futurecap.Future(t)
	const why = "is of no known version: stdf header fits no known version"
	for _, tc := range []struct {
		name     string
		era      decode.Version
		label    string
		findings int // no-version findings
	}{
		{"auto", decode.VersionUnknown, "unknown version · ", 2},
		{"--era 2026-07", futurecap.Config().Era, "version 2026-07 · ", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := engine.Config{Era: tc.era, Work: engine.Index | engine.Timeline | engine.Health | engine.Findings}
			m := newTestWith(t, cfg, path, Options{Title: "future"}, 160, 30)
			drive(t, m, "5")
			for conv := 1; conv <= futurecap.Config().Players; conv++ {
				if conv > 1 {
					drive(t, m, "c") // the next conversation
				}
				s := screen(m)
				line := fmt.Sprintf("conversation %d %s", conv, why)
				if !strings.Contains(s, tc.label) || strings.Contains(s, line) != (tc.findings > 0) || tc.findings == 0 && strings.Contains(s, why) {
					t.Errorf("health of conversation %d: want %q, and %q shown: %v:\n%s", conv, tc.label, line, tc.findings > 0, s)
				}
			}
			drive(t, m, "6")
			s := screen(m)
			if n := strings.Count(s, engine.KindNoVersion); n != tc.findings {
				t.Errorf("%d no-version findings in the findings view, want %d:\n%s", n, tc.findings, s)
			}
			for _, f := range engine.SortFindings(m.e.Findings()) {
				if f.Kind != engine.KindNoVersion {
					continue
				}
				c := m.e.Stats().Convs[f.Conv-1]
				if want := fmt.Sprintf("%s (%.0f of its %d packets fit none)", why, f.Figures["packets"], c.Packets); !strings.Contains(s, want) {
					t.Errorf("findings view lacks %q:\n%s", want, s)
				}
			}
		})
	}
}
