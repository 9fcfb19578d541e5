//go:build !linux

package source

import (
	"fmt"
	"runtime"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
)

// LiveSource captures frames from network interfaces. Live capture needs
// Linux (AF_PACKET); elsewhere OpenLive returns an error wrapping
// ErrLiveUnsupported.
type LiveSource struct{}

// OpenLive returns an error wrapping ErrLiveUnsupported: this system has
// no AF_PACKET sockets.
func OpenLive(o LiveOptions) (*LiveSource, error) {
	return nil, fmt.Errorf("%w (this is %s): capture with tcpdump and pipe it in: tcpdump -U -w - udp | pmdump read -", ErrLiveUnsupported, runtime.GOOS)
}

// ReadFrame implements FrameSource.
func (l *LiveSource) ReadFrame() ([]byte, gopacket.CaptureInfo, layers.LinkType, error) {
	return nil, gopacket.CaptureInfo{}, 0, ErrLiveUnsupported
}

// Interface implements FrameSource.
func (l *LiveSource) Interface(int) Interface { return Interface{} }

// Interfaces are the interfaces captured on: none.
func (l *LiveSource) Interfaces() []Interface { return nil }

// KernelStats implements KernelStatser.
func (l *LiveSource) KernelStats() (uint64, uint64, error) { return 0, 0, ErrLiveUnsupported }

// CapabilitiesKept implements the Linux method: nil.
func (l *LiveSource) CapabilitiesKept() error { return nil }

// Close implements io.Closer.
func (l *LiveSource) Close() error { return nil }
