package drive

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// hostileClock is a server that answers drive's clock and then sends the
// snfo frames of frames, 10 ms apart, again and again when repeat is set.
func hostileClock(t *testing.T, frames []int32, repeat bool) string {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); c.Close() })
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			switch decode.KindOf(buf[:n]) {
			case decode.KindHandshake:
				c.WriteToUDPAddrPort(decode.Encode(nil, decode.MustNewKind(decode.Modern, decode.KindHandshakeReply)), from)
			case decode.KindRemoteJoin:
				go func() {
					for {
						for _, f := range frames {
							p := decode.MustNewKind(decode.Modern, decode.KindRemoteInfo).Set("frame", int64(f)).Set("count", 1)
							select {
							case <-done:
								return
							case <-time.After(10 * time.Millisecond):
							}
							c.WriteToUDPAddrPort(decode.Encode(nil, p), from)
						}
						if !repeat {
							return
						}
					}
				}()
			}
		}
	}()
	return c.LocalAddr().String()
}

// A server that repeats one frame's snfo is silent: the run ends at the
// timeout. One older snfo among newer ones is not a level change.
func TestDriveHostileClock(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits for the network in real time (seconds)")
	}
	rec := record(t, testScript) // first join in frame 20
	start := time.Now()
	_, err := Run(context.Background(), rec, hostileClock(t, []int32{3}, true), Options{Timeout: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "sent no frame") || time.Since(start) > 5*time.Second {
		t.Errorf("the same snfo again and again: %v after %v", err, time.Since(start))
	}

	var frames []int32
	for f := int32(0); f <= 60; f++ {
		frames = append(frames, f)
	}
	frames = append(frames, 50, 61, 62) // one older snfo, repeated or reordered
	var events []Event
	_, err = Run(context.Background(), rec, hostileClock(t, frames, false), Options{Timeout: 500 * time.Millisecond, ProgressEvery: 1,
		OnEvent: func(e Event) { events = append(events, e) }})
	if err == nil {
		t.Fatal("the run ended without an error")
	}
	last := Key{}
	for _, e := range events {
		if e.Event == "progress" {
			last = *e.At
		}
	}
	if last != (Key{0, 62}) {
		t.Errorf("the clock ended at %v, want 0:62 (an older snfo taken for a level change?)", last)
	}
}
