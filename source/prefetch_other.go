//go:build !amd64

package source

import "unsafe"

// prefetch does nothing where no assembly for it is written.
func prefetch(unsafe.Pointer) {}
