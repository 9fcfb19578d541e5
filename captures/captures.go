// Package captures holds small sample captures that pmdump generates itself
// with "pmdump synth", one per protocol era, embedded in the binary so that
// "pmdump read sample:modern" works anywhere.
package captures

import (
	_ "embed"
	"fmt"
	"slices"
)

var (
	//go:embed legacy.pcap
	legacy []byte
	//go:embed modern.pcapng
	modern []byte
)

// Names lists the bundled samples, oldest era first.
var Names = []string{"legacy", "modern"}

// Sample returns the bytes of a bundled sample capture by era name:
// "legacy" (a pcap) or "modern" (a pcapng). The bytes are a copy the caller
// may keep or change.
func Sample(name string) ([]byte, error) {
	switch name {
	case "legacy":
		return slices.Clone(legacy), nil
	case "modern":
		return slices.Clone(modern), nil
	}
	return nil, fmt.Errorf("no sample %q (the samples are %s and %s)", name, Names[0], Names[1])
}
