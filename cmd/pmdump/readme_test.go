package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// Every capture path the README's examples give (a pmdump command with a
// folder in the path) exists from the clone's root, as a reader would run
// it.
func TestREADMEExamplePathsExist(t *testing.T) {
	realcap.Dir(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	capture := regexp.MustCompile(`\S*/\S*\.pcap(ng)?(\.gz)?\b`)
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "$ pmdump ") {
			continue
		}
		for _, p := range capture.FindAllString(line, -1) {
			n++
			if _, err := os.Stat(filepath.Join("../..", p)); err != nil {
				t.Errorf("README example %q: %s does not exist from the clone's root", line, p)
			}
		}
	}
	if n == 0 {
		t.Error("no example with a capture path in the README")
	}
}
