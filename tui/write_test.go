package tui

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// w writes the packets the filter shows to a capture file: each frame as
// captured from a file, rebuilt from addresses and payload from a sample
// (which cannot be read again); the file holds exactly those packets.
func TestWriteShownPackets(t *testing.T) {
	for _, c := range []struct {
		input, filter string
		rebuilt       bool
	}{
		{realcap.Path(t, "legacy/basic/capture.pcap"), "stak", false},
		{"sample:modern", "stdf and src == 0", true},
	} {
		m := newTest(t, c.input, 160, 48, false)
		out := filepath.Join(t.TempDir(), "shown.pcap")
		drive(t, m, "/"+c.filter+"<enter>", "w"+out+"<enter>")
		x := m.e.Index()
		rows := m.packets.rows
		if len(rows) == 0 {
			t.Fatalf("%s: the filter %s shows nothing", c.input, c.filter)
		}
		s := screen(m)
		if !strings.Contains(s, "packets written to "+out) || strings.Contains(s, "rebuilt from addresses") != c.rebuilt {
			t.Errorf("%s: status after w:\n%s", c.input, s)
		}
		r, err := source.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		var rec session.Record
		k := 0
		for ; ; k++ {
			d, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if k >= len(rows) {
				t.Fatalf("%s: more than the %d packets shown written", c.input, len(rows))
			}
			if err := x.Record(int(rows[k]), &rec); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(d.Payload, rec.Packet.Raw) || d.Src != rec.Src || d.Dst != rec.Dst || !d.TS.Equal(rec.TS) {
				t.Fatalf("%s: packet %d written as %v→%v %x at %v, shown %v→%v %x at %v", c.input, k, d.Src, d.Dst, d.Payload[:4], d.TS, rec.Src, rec.Dst, rec.Packet.Raw[:4], rec.TS)
			}
		}
		r.Close()
		if k != len(rows) {
			t.Errorf("%s: %d packets written, %d shown", c.input, k, len(rows))
		}
	}
}

// w while the filter still runs writes the packets it shows once it is
// done, and says so meanwhile.
func TestWriteWhileFiltering(t *testing.T) {
	m := newTest(t, "sample:modern", 160, 48, false)
	out := filepath.Join(t.TempDir(), "later.pcap")
	cmd := m.packets.applyFilter(&m.env, "stak") // its first chunk not run yet
	drive(t, m, "w"+out+"<enter>")
	if _, err := os.Stat(out); err == nil || !strings.Contains(m.env.msg, "once the filter is done") {
		t.Fatalf("w while filtering: message %q, file written already (%v)", m.env.msg, err)
	}
	drive(t, m, cmd)
	if !strings.Contains(m.env.msg, "packets written to "+out) {
		t.Errorf("after the filter: message %q", m.env.msg)
	}
	r, err := source.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	if n == 0 || n != len(m.packets.rows) {
		t.Errorf("%d packets written, %d shown", n, len(m.packets.rows))
	}
}
