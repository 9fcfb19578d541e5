package source

import (
	"errors"
	"time"
)

// LiveOptions configure a live capture.
type LiveOptions struct {
	// Interfaces to capture on, by name; "any" captures on every
	// interface (frames then start at the IP header: link type Raw).
	Interfaces []string
	// Promiscuous also captures frames not addressed to this host (on a
	// switched LAN, only where a mirror port or hub sends them).
	Promiscuous bool
	// Ports: when set, only UDP datagrams from or to these ports (and IPv4
	// fragments) are captured.
	Ports []uint16
	// RingSize is the kernel ring buffer of each interface, in bytes
	// (rounded to whole blocks of 256 KiB); 0 means 32 MiB. A bigger ring
	// absorbs longer bursts before the kernel drops frames.
	RingSize int
	// BlockTimeout is how long the kernel holds a partly filled block
	// before handing it over: the most a frame waits when traffic is slow.
	// 0 means 40 ms: a frame shows within 40 ms, and a quiet network costs
	// 25 wake-ups a second.
	BlockTimeout time.Duration
}

// Errors of OpenLive a user can act on; the error wraps one of them (or
// os.ErrPermission when the capture is not allowed) and says what to do.
var (
	// ErrNoInterface: no interface of that name; the message lists them.
	ErrNoInterface = errors.New("no such interface")
	// ErrInterfaceDown: the interface exists but is not up.
	ErrInterfaceDown = errors.New("interface is down")
	// ErrLiveUnsupported: live capture is not available on this system.
	ErrLiveUnsupported = errors.New("live capture is only supported on Linux")
)

// PermissionHint says how to get the permission live capture needs: the
// CAP_NET_RAW capability alone (promiscuous mode included), granted to a
// binary only a group may run, as Wireshark's dumpcap is installed.
const PermissionHint = `live capture needs root or the CAP_NET_RAW capability (promiscuous mode included): run as root, or grant it once to the binary, runnable only by a group of trusted users:
  sudo groupadd -f pmdump && sudo usermod -aG pmdump $USER
  sudo chgrp pmdump $(which pmdump) && sudo chmod 750 $(which pmdump)
  sudo setcap cap_net_raw=ep $(which pmdump)
(pmdump drops it once the capture sockets are open)`

const (
	defaultRingSize     = 32 << 20
	defaultBlockTimeout = 40 * time.Millisecond
	liveBlockSize       = 256 << 10 // holds the largest frame a loopback device sends (64 KiB)
	livePollTimeout     = 100 * time.Millisecond
)
