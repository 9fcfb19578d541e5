package gameclient

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/diftest"
	"github.com/pmdump/pmdump/statedif"
)

// fakeServer plays a modern game server by hand-made packets.
type fakeServer struct {
	t      *testing.T
	listen *net.UDPConn
	conn   *net.UDPConn // the per-client socket
	client netip.AddrPort
}

func udp(t *testing.T) *net.UDPConn {
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func (s *fakeServer) read(c *net.UDPConn) ([]byte, netip.AddrPort) {
	s.t.Helper()
	buf := make([]byte, 2048)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	n, from, err := c.ReadFromUDPAddrPort(buf)
	if err != nil {
		s.t.Fatalf("fake server: %v", err)
	}
	return buf[:n], from
}

// stdf sends the dif base − state in modern stdf pieces of 1000 bytes.
func (s *fakeServer) stdf(slsn int, src, dst int32, base, state []byte) {
	z := diftest.Deflate(s.t, diftest.Dif(base, state), statedif.ZlibLevel)
	for _, p := range diftest.Stdf(decode.Modern, uint8(slsn), src, dst, z) {
		s.conn.WriteToUDPAddrPort(p, s.client)
	}
}

// stak reads the client's next stak and returns the frame it acknowledges.
func (s *fakeServer) stak() int32 {
	s.t.Helper()
	for {
		p, _ := s.read(s.conn)
		if string(p[:4]) == "stak" {
			if len(p) != 54 {
				s.t.Fatalf("stak of %d bytes, want 54", len(p))
			}
			return int32(binary.LittleEndian.Uint32(p[5:]))
		}
	}
}

func state(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7/13)
	}
	return b
}

func TestClientFollowsTheServer(t *testing.T) {
	s := &fakeServer{t: t, listen: udp(t), conn: udp(t)}
	joined := make(chan *Client, 1)
	go func() {
		c, err := Join(context.Background(), s.listen.LocalAddr().String(), Options{Era: decode.Modern, Color: 5, Hostname: "a-very-long-hostname"})
		if err != nil {
			t.Error(err)
		}
		joined <- c
	}()
	p, from := s.read(s.listen)
	if string(p) != "1234" {
		t.Fatalf("first packet %q, want 1234", p)
	}
	s.client = from
	s.conn.WriteToUDPAddrPort([]byte("5678"), from)
	p, _ = s.read(s.conn)
	if len(p) != 21 || string(p[:4]) != "cjon" || p[4] != 5 || string(p[5:20]) != "a-very-long-hos" || p[20] != 0 {
		t.Fatalf("join request %q", p)
	}
	s.conn.WriteToUDPAddrPort([]byte{'s', 'j', 'o', 'n', 1, 0, 0, 0, 10, 0, 0, 0, 3, 5, 7}, from)
	c := <-joined
	if c == nil {
		t.FailNow()
	}
	defer c.Close()
	if c.Player != 3 || c.SLSN != 7 || c.JoinFrame != 10 {
		t.Fatalf("joined as player %d, slsn %d, frame %d", c.Player, c.SLSN, c.JoinFrame)
	}
	ran := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ran <- c.Run(ctx, 3*time.Second, func(c *Client) bool { return len(c.Applied) == 3 })
	}()

	const size = 4500 // several pieces
	a, b, d := state(1, size), state(2, size), state(9, size)
	s.stdf(7, 0, 10, nil, a) // keyframe
	if f := s.stak(); f != 10 {
		t.Fatalf("ack %d, want 10", f)
	}
	s.stdf(7, 10, 12, a, b)
	if f := s.stak(); f != 12 {
		t.Fatalf("ack %d, want 12", f)
	}
	s.stdf(7, 11, 14, a, d) // a base the client never had
	if f := s.stak(); f != 12 {
		t.Fatalf("after an unknown base: ack %d, want the newest held, 12", f)
	}
	s.stdf(9, 0, 5, nil, d) // two level sequences ahead: ignored
	s.stdf(8, 12, 3, b, d)  // the next level starts with a keyframe: ignored
	s.stdf(8, 0, 2, nil, d) // level change
	if f := s.stak(); f != 2 {
		t.Fatalf("after the level change: ack %d, want 2", f)
	}
	if err := <-ran; err != nil {
		t.Fatal(err)
	}
	want := []Applied{
		{SLSN: 7, Level: 0, Src: 0, Dst: 10, Sum: sha256.Sum256(a)},
		{SLSN: 7, Level: 0, Src: 10, Dst: 12, Sum: sha256.Sum256(b)},
		{SLSN: 8, Level: 1, Src: 0, Dst: 2, Sum: sha256.Sum256(d)},
	}
	if len(c.Applied) != len(want) {
		t.Fatalf("applied %+v", c.Applied)
	}
	for i := range want {
		if c.Applied[i] != want[i] {
			t.Errorf("applied[%d] = %+v, want %+v", i, c.Applied[i], want[i])
		}
	}
	if c.Reacks != 1 {
		t.Errorf("%d re-acks, want 1", c.Reacks)
	}
}
