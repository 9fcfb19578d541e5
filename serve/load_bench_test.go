package serve

import "testing"

func BenchmarkLoadModernBasic(b *testing.B) {
	path := sharedFile(b, "modern/basic/basic.pcap")
	for b.Loop() {
		if _, err := Load([]string{path}, LoadOptions{Player: 1}); err != nil {
			b.Fatal(err)
		}
	}
}
