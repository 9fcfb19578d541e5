package serve

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// TestServeBases follows the bases of one client through the server's
// sending of states: each dif's src is the state the client last
// acknowledged if it is among the last 8 sent (kept first, the lowest
// frame making way), else 0; a new level sequence voids the bases; the
// acknowledged state itself is not sent again. Steps: "S/F src" sends
// frame F of level sequence S and wants that src ("-": nothing sent),
// "ack F" takes a stak.
func TestServeBases(t *testing.T) {
	steps := "0/1 0,0/2 0,ack 2,0/3 2,ack 3,0/3 -,0/4 3,0/5 3,0/6 3,0/7 3,0/8 3,0/9 3,0/10 3," +
		"0/11 0,ack 11,0/12 11,1/5 0,ack 11,1/11 0,ack 5,1/12 5"
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			s := &Server{rec: &Recording{Era: era}, lim: DefaultLimits}
			c := newClient(context.Background(), s, conn, ln.LocalAddr().(*net.UDPAddr).AddrPort(), time.Now())
			sp := newSender(c)
			state := make([]byte, 300)
			buf := make([]byte, 2048)
			for _, step := range strings.Split(steps, ",") {
				a, b, _ := strings.Cut(step, " ")
				if a == "ack" {
					f, _ := strconv.Atoi(b)
					c.acked(int32(f))
					continue
				}
				sl, fr, _ := strings.Cut(a, "/")
				slsn, _ := strconv.Atoi(sl)
				frame, _ := strconv.Atoi(fr)
				state[frame] ^= 0x5a // each state differs
				n := sp.state(slsn, int32(frame), state, 0)
				if b == "-" {
					if n != 0 {
						t.Fatalf("%s: %d bytes sent, want none", step, n)
					}
					continue
				}
				ln.SetReadDeadline(time.Now().Add(5 * time.Second))
				m, _, err := ln.ReadFromUDPAddrPort(buf)
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				var p decode.Packet
				if err := decode.Decode(&p, buf[:m], era); err != nil || p.Layout.Name != "stdf" {
					t.Fatalf("%s: not an stdf: %v", step, err)
				}
				if got := strconv.Itoa(int(p.Int("src"))); got != b || p.Int("dst") != int64(frame) || p.Int("count") != 1 {
					t.Errorf("%s: stdf %d→%d (%d pieces), want src %s", step, p.Int("src"), p.Int("dst"), p.Int("count"), b)
				}
			}
		})
	}
}
