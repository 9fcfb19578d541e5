package main

import (
	"os"
	"testing"
)

func TestZZDumpEdge(t *testing.T) {
	b, _ := os.ReadFile(edgeCapture(t))
	os.WriteFile("/tmp/wsx/edge.pcap", b, 0o644)
	b, _ = os.ReadFile(mutatedCapture(t))
	os.WriteFile("/tmp/wsx/mutated.pcap", b, 0o644)
}
