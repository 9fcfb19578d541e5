package tui

import (
	"errors"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/source"
)

// writtenMsg is the end of writing the packets shown to a capture file.
type writtenMsg struct {
	path                      string
	written, rebuilt, refused int
	err                       error
}

// defaultWrite is the file the packets shown are written to when the
// prompt is left empty.
const defaultWrite = "packets.pcap"

// writeShown writes the packets the list shows (the filter's matches, or
// every packet) to a capture file, pcap or pcapng by its extension, off the
// UI goroutine: each frame as it was captured, or rebuilt from its
// addresses and payload when the capture cannot be read again (standard
// input, a compressed file, a live interface).
func (p *packetsModel) writeShown(c *env, path string) tea.Cmd {
	x := p.index(c)
	if path == "" || x == nil {
		return nil
	}
	if p.running {
		p.writeTo = path
		c.setMsg("writing to %s once the filter is done", path)
		return nil
	}
	var rows []int32
	n := x.Len()
	if p.filter != nil {
		rows = append(rows, p.rows...)
		n = len(rows)
	}
	c.setMsg("writing %d packets to %s…", n, path)
	return func() (msg tea.Msg) {
		defer func() {
			if r := recover(); r != nil {
				msg = writtenMsg{path: path, err: recovered("writing "+path+" failed", r)}
			}
		}()
		out := writtenMsg{path: path}
		var w *source.CaptureWriter
		var d source.Datagram
		for k := 0; k < n; k++ {
			i := k
			if rows != nil {
				i = int(rows[k])
			}
			rebuilt, err := x.Datagram(i, &d)
			if err != nil {
				out.err = err
				break
			}
			if w == nil {
				if w, err = source.CreateCapture(path, source.WriterOptions{Interfaces: []source.Interface{{Name: d.InterfaceName, LinkType: d.LinkType}}}); err != nil {
					out.err = err
					return out
				}
			}
			if err := w.WriteDatagram(&d); errors.Is(err, source.ErrLinkType) {
				out.refused++
				continue
			} else if err != nil {
				out.err = err
				break
			}
			out.written++
			if rebuilt {
				out.rebuilt++
			}
		}
		if w == nil && out.err == nil {
			w, out.err = source.CreateCapture(path, source.WriterOptions{}) // nothing to write: an empty capture
		}
		if w != nil {
			if err := w.Close(); err != nil && out.err == nil {
				out.err = err
			}
		}
		return out
	}
}

func (p *packetsModel) onWritten(c *env, msg writtenMsg) {
	if msg.err != nil {
		c.setErr(fmt.Errorf("writing %s: %w (%d packets written)", msg.path, msg.err, msg.written))
		return
	}
	s := fmt.Sprintf("%d packets written to %s", msg.written, msg.path)
	if msg.rebuilt > 0 {
		s += fmt.Sprintf(" (%d frames rebuilt from addresses and payload: the capture cannot be read again)", msg.rebuilt)
	}
	if msg.refused > 0 {
		s += fmt.Sprintf("; %d of another link type left out (a .pcapng holds them)", msg.refused)
	}
	c.setMsg("%s", s)
}
