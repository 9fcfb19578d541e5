//go:build !linux

package sender

import (
	"net"
	"syscall"
)

// recvErrors does nothing off Linux: errors are counted only as sends
// return them.
func recvErrors(*net.UDPConn) error { return nil }

// drainErrors does nothing off Linux.
func drainErrors(*net.UDPConn, func(syscall.Errno)) {}
