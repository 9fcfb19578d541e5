//go:build !unix

package source

import (
	"io"
	"os"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// OpenMapped reports false where files are not mapped: the caller reads the
// file as a stream.
func OpenMapped(f *os.File, name string) (*Reader, bool) { return nil, false }

// minMapped is the smallest file mapped: none is, here.
var minMapped int64

// mappedPcap is never made where files are not mapped.
type mappedPcap struct{ released int }

func (m *mappedPcap) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	return nil, gopacket.CaptureInfo{}, 0, io.EOF
}

func (m *mappedPcap) Interface(int) Interface { return Interface{} }

func (m *mappedPcap) holds(uintptr) bool { return false }

func newMappedReader([]byte, string) (*Reader, bool) { return nil, false }
