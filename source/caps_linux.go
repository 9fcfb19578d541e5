//go:build linux

package source

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrCapabilitiesKept is wrapped by LiveSource.CapabilitiesKept when the
// process holds capabilities it could not drop: a binary that links cgo
// cannot change every thread's capabilities at once (build it with
// CGO_ENABLED=0).
var ErrCapabilitiesKept = errors.New("capabilities kept")

// dropCapabilities clears the permitted, effective and inheritable
// capabilities of every thread of the process, for good: once the capture
// sockets are open, nothing pmdump does needs them, and the traffic it then
// decodes may be hostile. It does nothing when none are held.
//
// In a test binary it does nothing unless PMDUMP_TEST_DROP_CAPABILITIES is
// set: the tests open captures again after one another, and need root.
func dropCapabilities() error {
	if testing.Testing() && os.Getenv("PMDUMP_TEST_DROP_CAPABILITIES") == "" {
		return nil
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var held [2]unix.CapUserData
	if err := unix.Capget(&hdr, &held[0]); err != nil {
		return fmt.Errorf("reading the process's capabilities: %w", err)
	}
	if held == [2]unix.CapUserData{} {
		return nil
	}
	var none [2]unix.CapUserData
	// Capabilities belong to each thread: the change must reach them all.
	_, _, errno := syscall.AllThreadsSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0)
	if errno == syscall.ENOTSUP {
		return fmt.Errorf("%w after opening the capture sockets: this build of pmdump links cgo, so it cannot drop them from every thread (build it with CGO_ENABLED=0)", ErrCapabilitiesKept)
	}
	if errno != 0 {
		return fmt.Errorf("dropping capabilities: %w", errno)
	}
	return nil
}
