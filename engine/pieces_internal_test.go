package engine

import (
	"context"
	"os"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

// Behind the fast pass, the difs of a pcap file are rebuilt from their
// pieces read back from the file: the backlog keeps where they are, not
// their bytes, and spills a fraction of them. A pcapng file and standard
// input keep the bytes.
func TestBacklogReferences(t *testing.T) {
	for _, c := range []struct {
		capture string
		stdin   bool
		refs    bool
	}{
		{"modern/basic/basic.pcap", false, true},
		{"legacy/lossy/capture.pcap", false, true},
		{"modern/basic_pcapng/basic.pcapng", false, false},
		{"modern/basic/basic.pcap", true, false},
	} {
		path := realcap.Path(t, c.capture)
		name := path
		if c.stdin {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			old := os.Stdin
			os.Stdin, name = f, "-"
			t.Cleanup(func() { os.Stdin = old; f.Close() })
		}
		e := New(Config{Work: Index | Timeline, RebuildBehind: true, MemoryBudget: 3 << 10, TempDir: t.TempDir()})
		if err := e.Run(context.Background(), name); err != nil {
			t.Fatal(err)
		}
		e.Wait()
		st := e.Stats()
		complete := 0
		for _, d := range st.Difs {
			complete += d.Complete
		}
		b := e.bh
		if c.refs && (b.fromFile != complete || complete == 0) {
			t.Errorf("%s: %d difs read back from the file, want the %d complete", c.capture, b.fromFile, complete)
		}
		if !c.refs && b.fromFile != 0 {
			t.Errorf("%s (stdin %v): %d difs read back from a file", c.capture, c.stdin, b.fromFile)
		}
		if c.refs && b.q.spilled > int64(complete)*256 {
			t.Errorf("%s: %d bytes spilled for %d difs: the backlog keeps their bytes", c.capture, b.q.spilled, complete)
		}
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}
}
