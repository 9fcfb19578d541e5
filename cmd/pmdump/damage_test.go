package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
)

// A damaged capture keeps its warning and its partial result, and exits
// with a status scripts can test: 4 when it was cut in the middle of a
// record, 2 when nothing at all in it could be read.
func TestDamagedCaptureExitStatus(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(realcap.Path(t, "legacy/basic/capture.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	junk := make([]byte, 2000)
	for i := range junk {
		junk[i] = byte(i*7 + 0x9b)
	}
	cases := []struct {
		name, path string
		code       int
		frames     int // of stats --json
		say        string
	}{
		{"cut in a record", write("cut.pcap", data[:500000]), exitDamaged, 4293, "frame 4294: capture truncated in the middle of a record"},
		{"cut after a record header", write("hdr.pcap", data[:24+16]), exitUnreadable, -1, "nothing in it could be read"},
		{"unreadable first record", write("junk.pcap", append(append([]byte(nil), data[:24]...), junk...)), exitUnreadable, -1, "nothing in it could be read"},
		{"whole", write("whole.pcap", data), exitOK, 7332, ""}, // tcpdump -r counts 7332 frames, and 4293 of the cut file
	}
	for _, c := range cases {
		for _, cmd := range []string{"read", "stats", "states"} {
			out, errs, code := pmdump(cmd, c.path)
			if code != c.code || !strings.Contains(errs, c.say) {
				t.Errorf("%s %s: exit %d, want %d; stderr %q does not say %q", cmd, c.name, code, c.code, errs, c.say)
			}
			if code == exitDamaged && out == "" {
				t.Errorf("%s %s: no partial result", cmd, c.name)
			}
		}
		out, _, _ := pmdump("stats", "--json", c.path)
		if c.frames < 0 {
			if out != "" {
				t.Errorf("stats %s printed figures of nothing: %s", c.name, out)
			}
			continue
		}
		var st engine.Stats
		if err := json.Unmarshal([]byte(out), &st); err != nil {
			t.Fatalf("stats %s: %v", c.name, err)
		}
		if st.Frames != c.frames || (len(st.Damaged) == 1) != (c.code == exitDamaged) {
			t.Errorf("stats %s: %d frames (want %d), damaged %q", c.name, st.Frames, c.frames, st.Damaged)
		}
	}
}
