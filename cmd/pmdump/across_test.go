package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// twoGames writes the real legacy/lossy capture twice over into one pcap
// file: two games of two clients each, on the same endpoints.
func twoGames(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(realcap.Path(t, "legacy/lossy/capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "two-games.pcap")
	if err := os.WriteFile(p, append(b, b[24:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// diff --all-players compares the clients of one game, and --conv picks
// the game.
func TestDiffAllPlayersOneGame(t *testing.T) {
	t.Parallel()
	path := twoGames(t)
	_, errs, code := pmdump("diff", path, "--all-players", "1825")
	if code != 1 || !strings.Contains(errs, "2 games: game 1 (conversations 1, 2); game 2 (conversations 3, 4); choose one with --conv") {
		t.Errorf("two games without --conv: exit %d, want 1 and the games listed:\n%s", code, errs)
	}
	compared := regexp.MustCompile(`(?m)^diff \S+ \(player \d\) frame \d+ → \S+`)
	for _, c := range []struct {
		conv string
		want []string // conversations whose states are described
	}{
		{"1", []string{"conversation 1)", "conversation 2)"}},
		{"4", []string{"conversation 4)", "conversation 3)"}},
	} {
		out, errs, code := pmdump("diff", path, "--all-players", "1825", "--conv", c.conv)
		if code != 0 {
			t.Errorf("--conv %s: exit %d\n%s", c.conv, code, errs)
			continue
		}
		if n := len(compared.FindAllString(out, -1)); n != 1 {
			t.Errorf("--conv %s: %d comparisons, want 1 (two clients in one game):\n%s", c.conv, n, out)
		}
		var described []string
		for _, line := range strings.Split(errs, "\n") {
			if m := regexp.MustCompile(`^127\.0\.0\.1:\d+ \((conversation \d\))`).FindStringSubmatch(line); m != nil {
				described = append(described, m[1])
			}
		}
		if strings.Join(described, ",") != strings.Join(c.want, ",") {
			t.Errorf("--conv %s compares %v, want %v (the reference first)", c.conv, described, c.want)
		}
	}
}
