//go:build !linux

package drive

import (
	"net"
	"net/netip"
	"runtime"
)

// lockRealtime locks the calling goroutine to its OS thread; real-time
// scheduling is asked for on Linux only.
func lockRealtime() bool {
	runtime.LockOSThread()
	return false
}

func unlockRealtime(bool) { runtime.UnlockOSThread() }

// kernelReader is for Linux only: elsewhere the reads go through the
// runtime's network poller.
func kernelReader(*net.UDPConn) (func([]byte) (int, netip.AddrPort, error), bool) {
	return nil, false
}
