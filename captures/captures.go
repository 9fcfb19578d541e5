// Package captures holds small sample captures that pmdump generates itself
// with "pmdump synth", embedded in the binary so that "pmdump read
// sample:modern" works anywhere: one of the legacy era, one of the modern
// era and one of the newest wire version.
package captures

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

//go:embed legacy.pcap modern.pcapng 2026-07.pcapng
var files embed.FS

// A Bundled is one bundled sample capture.
type Bundled struct {
	// Name is how a user names the sample ("sample:NAME"): the name of its
	// wire version.
	Name string
	// File is the capture's file name in this package's folder; its ground
	// truth is beside it (File without the extension, then
	// "_server_gt.csv" and "_cN_client_gt.csv").
	File string
}

// Bundle lists the bundled samples, oldest wire version first; the last is
// of the newest version pmdump knows.
var Bundle = []Bundled{
	{Name: "legacy", File: "legacy.pcap"},
	{Name: "modern", File: "modern.pcapng"},
	{Name: "2026-07", File: "2026-07.pcapng"},
}

// Newest is the name "sample:newest" takes: the sample of the newest
// version (the last of Bundle).
const Newest = "newest"

// Names lists the names of the bundled samples, in the order of Bundle.
var Names = func() []string {
	var n []string
	for _, b := range Bundle {
		n = append(n, b.Name)
	}
	return n
}()

// Sample returns the bytes of a bundled sample capture by name: one of
// Names, or Newest for the last of them. The bytes are a copy the caller
// may keep or change.
func Sample(name string) ([]byte, error) {
	if name == Newest {
		name = Bundle[len(Bundle)-1].Name
	}
	for _, b := range Bundle {
		if b.Name == name {
			data, err := files.ReadFile(b.File)
			if err != nil {
				return nil, fmt.Errorf("sample %s: %w", name, err)
			}
			return slices.Clone(data), nil
		}
	}
	return nil, fmt.Errorf("no sample %q (the samples are %s, and %s for the newest)", name, strings.Join(Names, ", "), Newest)
}
