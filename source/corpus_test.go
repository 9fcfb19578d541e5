package source_test

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/gopacket/gopacket/layers"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the seed files in testdata/fuzz")

// corpusFile is a value in Go's fuzz corpus file format.
func corpusFile(b []byte) []byte {
	return []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b))
}

// syncCorpus checks that testdata/fuzz/<target> holds one file seed-<name>
// per seed with exactly its bytes, or with -update-corpus writes them. Files
// not named seed-* (crashers the fuzzer found) are left alone.
func syncCorpus(t *testing.T, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if *updateCorpus {
		old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
		for _, f := range old {
			os.Remove(f)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(seeds))
	for n := range seeds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, "seed-"+n)
		want := corpusFile(seeds[n])
		if *updateCorpus {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("seed %s is missing or stale (%v); run go test -run TestSeedCorpus -update-corpus", path, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
	if !*updateCorpus && len(files) != len(seeds) {
		t.Errorf("%s holds %d seed files, the generator makes %d; run go test -run TestSeedCorpus -update-corpus", dir, len(files), len(seeds))
	}
}

// readerSeeds: tiny captures of every link type the reader knows, both
// formats, gzip, fragments, VLAN tags, snap-length cuts and cut records.
func readerSeeds(t *testing.T) map[string][]byte {
	seeds := map[string][]byte{}
	p := []byte("cdat\x01\x00\x00\x01\x2c\x11")
	for _, l := range []struct {
		name string
		lt   layers.LinkType
		b    builder
		six  bool
	}{
		{"ethernet", layers.LinkTypeEthernet, ethernet, false},
		{"ethernet-ipv6", layers.LinkTypeEthernet, ethernet, true},
		{"vlan", layers.LinkTypeEthernet, vlan, false},
		{"qinq", layers.LinkTypeEthernet, qinq, false},
		{"sll", layers.LinkTypeLinuxSLL, sll, false},
		{"sll2-ipv6", layers.LinkTypeLinuxSLL2, sll2, true},
		{"null-le", layers.LinkTypeNull, null(binary.LittleEndian, 2), false},
		{"null-be-ipv6", layers.LinkTypeNull, null(binary.BigEndian, 30), true},
		{"loop", layers.LinkTypeLoop, null(binary.BigEndian, 2), false},
		{"raw", layers.LinkTypeRaw, ipPacket, false},
		{"raw-ipv6", layers.LinkTypeRaw, ipPacket, true},
		{"ipv4", layers.LinkTypeIPv4, ipPacket, false},
		{"ipv6", layers.LinkTypeIPv6, ipPacket, true},
	} {
		c, s := cli4, srv4
		if l.six {
			c, s = cli6, srv6
		}
		seeds["pcap-"+l.name] = writePcap(t, l.lt, 65535, record{data: l.b(t, c, s, p), ts: epoch}, record{data: l.b(t, s, c, payloadB), ts: epoch})
	}
	two := writePcapng(t, []layers.LinkType{layers.LinkTypeEthernet, layers.LinkTypeLinuxSLL},
		record{data: ethernet(t, cli4, srv4, p), ts: epoch}, record{data: sll(t, srv4, cli4, payloadB), ts: epoch, intf: 1})
	seeds["pcapng-two-interfaces"] = two
	seeds["pcapng-cut"] = two[:len(two)-9]
	seeds["gzip-pcapng"] = gz(two)
	big := bytes.Repeat([]byte("stdf"), 100)
	frags := fragments(t, srv4, cli4, big, 7, 136)
	seeds["pcap-fragments"] = writePcap(t, layers.LinkTypeEthernet, 65535,
		record{data: frags[1], ts: epoch}, record{data: frags[0], ts: epoch}, record{data: ethernet(t, cli4, srv4, p), ts: epoch}, record{data: frags[2], ts: epoch})
	full := ethernet(t, srv4, cli4, big)
	seeds["pcap-snaplen"] = writePcap(t, layers.LinkTypeEthernet, 64, record{data: full[:64], length: len(full), ts: epoch})
	one := writePcap(t, layers.LinkTypeEthernet, 65535, record{data: ethernet(t, cli4, srv4, p), ts: epoch}, record{data: ethernet(t, srv4, cli4, payloadB), ts: epoch})
	seeds["pcap-cut"] = one[:len(one)-20]
	seeds["gzip-pcap"] = gz(one)
	seeds["pcap-big-endian"] = bigEndianPcap(t, one)
	seeds["pcap-non-udp"] = writePcap(t, layers.LinkTypeEthernet, 65535, record{data: tcpFrame(t), ts: epoch}, record{data: arpFrame(t), ts: epoch},
		record{data: ethernet(t, cli4, srv4, p)[:30], ts: epoch})
	seeds["pcap-header-only"] = writePcap(t, layers.LinkTypeEthernet, 65535)
	seeds["not-a-capture"] = []byte("hello")
	return seeds
}

func TestSeedCorpus(t *testing.T) {
	seeds := readerSeeds(t)
	for name, b := range seeds {
		if len(b) > 4096 {
			t.Errorf("seed %s is %d bytes; keep seeds small", name, len(b))
		}
	}
	syncCorpus(t, "FuzzReader", seeds)
}
