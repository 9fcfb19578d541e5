package drive

import (
	"net"
	"net/netip"
	"runtime"

	"golang.org/x/sys/unix"
)

// realtimePriority is the SCHED_FIFO priority of drive's clock and sending
// threads: above every ordinary thread, below the kernel's own (50).
const realtimePriority = 10

// lockRealtime locks the calling goroutine to its OS thread and asks for
// real-time scheduling (SCHED_FIFO) of that thread; it reports whether the
// kernel granted it (it needs root or CAP_SYS_NICE). The caller unlocks
// with runtime.UnlockOSThread. Written here because no library sets a
// thread's policy; x/sys gives the system call.
func lockRealtime() bool {
	runtime.LockOSThread()
	// Reset on fork: threads the runtime starts from this one, and the
	// processes drive starts (the game's server, which spins between
	// frames), run with ordinary scheduling.
	attr := unix.SchedAttr{Policy: unix.SCHED_FIFO, Priority: realtimePriority, Flags: unix.SCHED_FLAG_RESET_ON_FORK}
	return unix.SchedSetAttr(0, &attr, 0) == nil
}

// unlockRealtime returns the thread to ordinary scheduling and unlocks it.
func unlockRealtime(rt bool) {
	if rt {
		attr := unix.SchedAttr{Policy: 0} // SCHED_OTHER
		unix.SchedSetAttr(0, &attr, 0)
	}
	runtime.UnlockOSThread()
}

// kernelReader makes c's reads block in the kernel on the calling thread
// (with a 100 ms timeout, so that the reader can see it should stop) and
// returns the read: a datagram wakes the thread that waits for it, in real
// time when it has that policy, rather than through the runtime's network
// poller, whose threads a busy machine delays. ok is false when the socket
// cannot be read so.
func kernelReader(c *net.UDPConn) (read func([]byte) (int, netip.AddrPort, error), ok bool) {
	rc, err := c.SyscallConn()
	if err != nil {
		return nil, false
	}
	fd := -1
	rc.Control(func(f uintptr) {
		tv := unix.Timeval{Usec: 100_000}
		if unix.SetNonblock(int(f), false) == nil && unix.SetsockoptTimeval(int(f), unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv) == nil {
			fd = int(f)
		}
	})
	if fd < 0 {
		return nil, false
	}
	return func(b []byte) (int, netip.AddrPort, error) {
		n, sa, err := unix.Recvfrom(fd, b, 0)
		if err != nil {
			return 0, netip.AddrPort{}, err
		}
		switch sa := sa.(type) {
		case *unix.SockaddrInet4:
			return n, netip.AddrPortFrom(netip.AddrFrom4(sa.Addr), uint16(sa.Port)), nil
		case *unix.SockaddrInet6:
			return n, netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), uint16(sa.Port)), nil
		}
		return n, netip.AddrPort{}, nil
	}, true
}
