package source_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/pmdump/pmdump/internal/fuzzcorpus"

	"github.com/gopacket/gopacket/layers"
)

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
	seeds["pcap-huge-record"] = hugePcapRecord(t, 1<<31, 1<<31)
	seeds["pcapng-huge-epb"] = hugePcapngBlock(t, 6, 1<<31)
	seeds["pcapng-huge-spb"] = hugePcapngBlock(t, 3, 1<<31)
	seeds["pcapng-huge-block"] = hugePcapngBlock(t, 0x40000bad, 1<<31)
	seeds["pcap-unsupported-link"] = writePcap(t, layers.LinkTypeTokenRing, 65535, record{data: ethernet(t, cli4, srv4, p), ts: epoch})
	var flood []record
	for id := 0; id < 12; id++ {
		flood = append(flood, record{data: fragments(t, srv4, cli4, big[:64], uint16(id), 16)[id%3], ts: epoch})
	}
	seeds["pcap-fragment-flood"] = writePcap(t, layers.LinkTypeEthernet, 65535, flood...)
	return seeds
}

func TestSeedCorpus(t *testing.T) {
	seeds := readerSeeds(t)
	for name, b := range seeds {
		if len(b) > 4096 {
			t.Errorf("seed %s is %d bytes; keep seeds small", name, len(b))
		}
	}
	fuzzcorpus.Sync(t, "FuzzReader", seeds)
}
