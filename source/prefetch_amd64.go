package source

import "unsafe"

// prefetch asks the processor to bring the two cache lines at p into its
// caches, without waiting for them. Go has no portable prefetch, hence the
// few instructions of assembly (prefetch_amd64.s).
//
//go:noescape
func prefetch(p unsafe.Pointer)
