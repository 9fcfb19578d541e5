package sender

import (
	"encoding/binary"
	"fmt"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// recvErrors asks the kernel to queue every error the network reports for
// the socket's datagrams (IP_RECVERR), also on a socket that is not
// connected, so that each one can be counted.
func recvErrors(c *net.UDPConn) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	var serr error
	err = rc.Control(func(fd uintptr) {
		if c.LocalAddr().(*net.UDPAddr).IP.To4() != nil {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVERR, 1)
		} else {
			serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVERR, 1)
		}
	})
	if err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("IP_RECVERR: %w", err)
	}
	return nil
}

// drainErrors reads the socket's error queue to its end and calls report
// with each error's number.
func drainErrors(c *net.UDPConn, report func(syscall.Errno)) {
	rc, err := c.SyscallConn()
	if err != nil {
		return
	}
	var buf [64]byte
	var oob [512]byte
	// Control, not Read: a reader may be blocked on the socket.
	rc.Control(func(fd uintptr) {
		for {
			_, oobn, _, _, err := unix.Recvmsg(int(fd), buf[:], oob[:], unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
			if err != nil {
				return
			}
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err != nil {
				continue
			}
			for _, m := range msgs {
				ip := m.Header.Level == unix.SOL_IP && m.Header.Type == unix.IP_RECVERR
				ip6 := m.Header.Level == unix.SOL_IPV6 && m.Header.Type == unix.IPV6_RECVERR
				if (ip || ip6) && len(m.Data) >= 4 {
					// struct sock_extended_err begins with ee_errno.
					report(syscall.Errno(binary.NativeEndian.Uint32(m.Data)))
				}
			}
		}
	})
}
