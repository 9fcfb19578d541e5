//go:build linux

package source_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/source"
)

// Once the capture sockets are open, no thread of the process holds a
// capability any more (checked in a child process, which the drop cannot
// be undone in). A test binary that links cgo cannot drop them from every
// thread: it says so, and the test skips.
func TestLiveDropsCapabilities(t *testing.T) {
	if os.Getenv("PMDUMP_TEST_CAPS_CHILD") != "" {
		capsChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("not root: opening a capture needs CAP_NET_RAW")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLiveDropsCapabilities$", "-test.v")
	cmd.Env = append(os.Environ(), "PMDUMP_TEST_CAPS_CHILD=1", "PMDUMP_TEST_DROP_CAPABILITIES=1")
	out, err := cmd.CombinedOutput()
	switch {
	case strings.Contains(string(out), "CAPS-KEPT-CGO"):
		t.Skip("this test binary links cgo, which cannot drop capabilities from every thread: run it with CGO_ENABLED=0")
	case err != nil:
		t.Fatalf("child: %v\n%s", err, out)
	}
}

func capsChild(t *testing.T) {
	held := func() []string {
		var hold []string
		tasks, _ := filepath.Glob("/proc/self/task/*/status")
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(b), "\n") {
				for _, k := range []string{"CapPrm:", "CapEff:", "CapInh:"} {
					if v, ok := strings.CutPrefix(l, k); ok && strings.Trim(strings.TrimSpace(v), "0") != "" {
						hold = append(hold, f+" "+l)
					}
				}
			}
		}
		return hold
	}
	if len(held()) == 0 {
		t.Fatal("the child holds no capability to begin with")
	}
	live, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo"}, Promiscuous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if err := live.CapabilitiesKept(); err != nil {
		if errors.Is(err, source.ErrCapabilitiesKept) {
			t.Log("CAPS-KEPT-CGO")
			return
		}
		t.Fatal(err)
	}
	if h := held(); len(h) > 0 {
		t.Errorf("capabilities still held after opening the capture:\n%s", strings.Join(h, "\n"))
	}
	// The capture still works without them.
	if _, _, err := live.KernelStats(); err != nil {
		t.Errorf("kernel stats after the drop: %v", err)
	}
}
