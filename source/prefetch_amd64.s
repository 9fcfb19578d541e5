#include "textflag.h"

// func prefetch(p unsafe.Pointer)
// Asks for the two cache lines at p (PREFETCHT0: into every cache level).
TEXT ·prefetch(SB),NOSPLIT,$0-8
	MOVQ p+0(FP), AX
	PREFETCHT0 (AX)
	PREFETCHT0 64(AX)
	RET
