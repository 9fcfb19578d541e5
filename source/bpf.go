package source

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// FilterLink is the link layer a kernel capture filter reads frames of.
type FilterLink uint8

const (
	// FilterEthernet: Ethernet frames (also the loopback device), with or
	// without one 802.1Q tag.
	FilterEthernet FilterLink = iota
	// FilterRawIP: frames that start with the IP header (the "any" device,
	// captured without link headers; tunnels).
	FilterRawIP
	// FilterLinuxSLL: Linux cooked (SLL) frames.
	FilterLinuxSLL
)

// FilterOptions choose what a kernel capture filter passes.
type FilterOptions struct {
	Link FilterLink
	// Ports: when set, only UDP datagrams from or to one of these ports
	// (and IPv4 fragments after the first, which carry no ports).
	Ports []uint16
	// DropOutgoing drops frames the kernel marks as sent by this host:
	// on a loopback device every packet is seen twice, once sent and once
	// received, and one is enough.
	DropOutgoing bool
	// DropOutgoingOn drops frames sent by this host only on the interfaces
	// of these indexes (the loopback devices, for "any").
	DropOutgoingOn []int
}

// snapAll is what an accepting filter returns: whole frames.
const snapAll = MaxRecord

// CaptureFilter assembles the classic BPF program of a live capture: it
// passes UDP over IPv4 and IPv6 (and IPv4 fragments of UDP, which the
// reader reassembles), optionally only given ports, so the rest of the
// network's traffic costs nothing; and it can drop a host's own frames
// on loopback devices, as libpcap does.
func CaptureFilter(o FilterOptions) ([]bpf.Instruction, error) {
	p := &asm{labels: map[string]int{}}
	if o.DropOutgoing {
		p.add(bpf.LoadExtension{Num: bpf.ExtType})
		p.jeq(4, "reject", "") // PACKET_OUTGOING
	}
	for i, idx := range o.DropOutgoingOn {
		next := fmt.Sprintf("lo%d", i)
		p.add(bpf.LoadExtension{Num: bpf.ExtInterfaceIndex})
		p.jeq(uint32(idx), "", next)
		p.add(bpf.LoadExtension{Num: bpf.ExtType})
		p.jeq(4, "reject", next)
		p.label(next)
	}
	switch o.Link {
	case FilterRawIP:
		p.add(bpf.LoadAbsolute{Off: 0, Size: 1})
		p.add(bpf.ALUOpConstant{Op: bpf.ALUOpShiftRight, Val: 4})
		p.jeq(4, "ip4-0", "")
		p.jeq(6, "ip6-0", "reject")
		p.ip4(o.Ports, 0)
		p.ip6(o.Ports, 0)
	case FilterEthernet:
		p.add(bpf.LoadAbsolute{Off: 12, Size: 2})
		p.jeq(0x0800, "ip4-14", "")
		p.jeq(0x86dd, "ip6-14", "")
		p.jeq(0x8100, "", "reject")
		p.add(bpf.LoadAbsolute{Off: 16, Size: 2})
		p.jeq(0x0800, "ip4-18", "")
		p.jeq(0x86dd, "ip6-18", "reject")
		p.ip4(o.Ports, 14)
		p.ip6(o.Ports, 14)
		p.ip4(o.Ports, 18)
		p.ip6(o.Ports, 18)
	case FilterLinuxSLL:
		p.add(bpf.LoadAbsolute{Off: 14, Size: 2})
		p.jeq(0x0800, "ip4-16", "")
		p.jeq(0x86dd, "ip6-16", "reject")
		p.ip4(o.Ports, 16)
		p.ip6(o.Ports, 16)
	default:
		return nil, fmt.Errorf("capture filter: unknown link %d", o.Link)
	}
	p.label("accept")
	p.add(bpf.RetConstant{Val: snapAll})
	p.label("reject")
	p.add(bpf.RetConstant{Val: 0})
	return p.resolve()
}

// ip4 passes UDP in an IPv4 header at off: any fragment after the first,
// or a datagram whose ports match.
func (p *asm) ip4(ports []uint16, off uint32) {
	p.label(fmt.Sprintf("ip4-%d", off))
	p.add(bpf.LoadAbsolute{Off: off + 9, Size: 1})
	p.jeq(17, "", "reject") // UDP
	if len(ports) == 0 {
		p.add(bpf.RetConstant{Val: snapAll})
		return
	}
	p.add(bpf.LoadAbsolute{Off: off + 6, Size: 2})
	p.jset(0x1fff, "accept", "") // a later fragment: no ports to look at
	p.add(bpf.LoadMemShift{Off: off})
	p.ports(ports, off)
}

// ip6 passes UDP in an IPv6 header at off (UDP right after it) whose ports
// match.
func (p *asm) ip6(ports []uint16, off uint32) {
	p.label(fmt.Sprintf("ip6-%d", off))
	p.add(bpf.LoadAbsolute{Off: off + 6, Size: 1})
	p.jeq(17, "", "reject")
	if len(ports) == 0 {
		p.add(bpf.RetConstant{Val: snapAll})
		return
	}
	p.add(bpf.LoadConstant{Dst: bpf.RegX, Val: 40})
	p.ports(ports, off)
}

// ports passes a UDP header at X+off whose source or destination port is
// one of ports.
func (p *asm) ports(ports []uint16, off uint32) {
	for _, field := range []uint32{0, 2} {
		p.add(bpf.LoadIndirect{Off: off + field, Size: 2})
		for _, port := range ports {
			p.jeq(uint32(port), "accept", "")
		}
	}
	p.add(bpf.RetConstant{Val: 0})
}

// asm is a tiny assembler with named jump targets ("" is the next
// instruction).
type asm struct {
	ins    []bpf.Instruction
	jumps  []jump
	labels map[string]int
}

type jump struct {
	at          int
	true, false string
}

func (p *asm) add(i bpf.Instruction) { p.ins = append(p.ins, i) }
func (p *asm) label(name string)     { p.labels[name] = len(p.ins) }

func (p *asm) jeq(v uint32, t, f string) {
	p.jumps = append(p.jumps, jump{len(p.ins), t, f})
	p.add(bpf.JumpIf{Cond: bpf.JumpEqual, Val: v})
}

func (p *asm) jset(v uint32, t, f string) {
	p.jumps = append(p.jumps, jump{len(p.ins), t, f})
	p.add(bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: v})
}

func (p *asm) resolve() ([]bpf.Instruction, error) {
	skip := func(from int, label string) (uint8, error) {
		if label == "" {
			return 0, nil
		}
		to, ok := p.labels[label]
		if !ok {
			return 0, fmt.Errorf("capture filter: no label %q", label)
		}
		n := to - from - 1
		if n < 0 || n > 255 {
			return 0, fmt.Errorf("capture filter: jump of %d to %q (too many ports?)", n, label)
		}
		return uint8(n), nil
	}
	for _, j := range p.jumps {
		ji := p.ins[j.at].(bpf.JumpIf)
		var err error
		if ji.SkipTrue, err = skip(j.at, j.true); err != nil {
			return nil, err
		}
		if ji.SkipFalse, err = skip(j.at, j.false); err != nil {
			return nil, err
		}
		p.ins[j.at] = ji
	}
	return p.ins, nil
}
