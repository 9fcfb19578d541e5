package serve

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
)

// TestServeEndOfRecording checks how a recording ends: the last state is
// never sent as a dif from a frame to itself, a legacy client that missed it
// is sent it again at a frame ahead of its own, and the legacy sdat stream
// goes on to its end.
func TestServeEndOfRecording(t *testing.T) {
	t.Parallel()
	// states: the recording's last ones are served
	tests := []servedRecording{
		{"sample:legacy", 1, 0},
		{"sample:modern", 1, 0},
		// The real legacy server sent this player game moves after its
		// last state.
		{"legacy/lossy/capture.pcap", 2, 40},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			rec := tt.load(t)
			start := 0
			if tt.states > 0 {
				start = len(rec.States) - tt.states
			}
			end := rec.States[len(rec.States)-1]
			first := rec.States[start].At
			wantSdat, afterEnd := 0, 0
			for _, s := range rec.Sdat {
				if s.At >= first {
					wantSdat++
				}
				if s.At > end.At {
					afterEnd++
				}
			}
			a := startArenaOpt(t, rec, Options{Speed: 6, Start: start})
			// This client loses the last state as first sent.
			dropped := map[int]bool{}
			c, err := gameclient.Join(a.ctx, a.listen.String(), gameclient.Options{Era: rec.Era, Color: 1, Hostname: "late",
				Drop: func(p gameclient.Piece) bool {
					if p.Dst != end.Frame || dropped[p.Seq] {
						return false
					}
					dropped[p.Seq] = true
					return true
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			level := end.Level - rec.States[start].Level
			err = c.Run(a.ctx, 3*time.Second, func(c *gameclient.Client) bool {
				n := len(c.Applied)
				return n > 0 && c.Applied[n-1].Sum == end.Sum && c.Applied[n-1].Level == level && c.Sdats >= wantSdat
			})
			if err != nil {
				t.Fatalf("%v: %d states applied, %d of %d sdat", err, len(c.Applied), c.Sdats, wantSdat)
			}
			last := c.Applied[len(c.Applied)-1]
			t.Logf("last state applied at frame %d (recorded %d); %d sdat, %d after the last state", last.Dst, end.Frame, c.Sdats, afterEnd)
			if rec.Era == decode.Legacy && last.Dst <= end.Frame {
				t.Errorf("legacy: the last state again at frame %d, not ahead of %d", last.Dst, end.Frame)
			}
			if rec.Era == decode.Modern && last.Dst != end.Frame {
				t.Errorf("modern: the last state again at frame %d, want %d", last.Dst, end.Frame)
			}
			if c.SelfDifs != 0 {
				t.Errorf("%d difs from a frame to itself", c.SelfDifs)
			}
			if rec.Era == decode.Legacy && c.SdatFrame < end.Frame {
				t.Errorf("the last sdat is of frame %d, before the last state's", c.SdatFrame)
			}
		})
	}
}

// TestServeNoSelfDif sends the state a client has acknowledged again: no
// dif from a frame to itself goes out.
func TestServeNoSelfDif(t *testing.T) {
	t.Parallel()
	rec := load(t, "sample:modern", 1)
	a := startArena(t, rec, 1, Limits{})
	p := newPeer(t, rec.Era, netip.AddrPort{})
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	c := newClient(a.ctx, a.srv, conn, p.addr(), time.Now())
	sp := newSender(c)
	data, err := rec.State(0, rec.Cursor())
	if err != nil {
		t.Fatal(err)
	}
	f := rec.States[0].Frame
	if n := sp.state(0, f, data, 0); n == 0 {
		t.Fatal("first state not sent")
	}
	c.acked(f)
	if n := sp.state(0, f, data, 0); n != 0 {
		t.Errorf("the acknowledged state sent again as a dif to itself (%d bytes)", n)
	}
	if n := sp.state(0, f+1, data, 0); n == 0 {
		t.Error("the next state not sent")
	}
}
