package sender

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"testing"
	"time"
)

// listen opens a loopback receiver with a large buffer.
func listen(t *testing.T) *net.UDPConn {
	t.Helper()
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	l.SetReadBuffer(4 << 20)
	t.Cleanup(func() { l.Close() })
	return l
}

func dial(t *testing.T, addr net.Addr) net.Conn {
	t.Helper()
	c, err := net.Dial("udp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sequence makes n datagrams of varied sizes, gap apart, each payload
// telling its index.
func sequence(n int, gap time.Duration) []Datagram {
	ds := make([]Datagram, n)
	for i := range ds {
		p := fmt.Appendf(nil, "dg%06d", i)
		p = append(p, bytes.Repeat([]byte{byte(i)}, i%900)...)
		ds[i] = Datagram{Offset: time.Duration(i) * gap, Payload: p}
	}
	return ds
}

// loopbackCase is one paced run over loopback.
type loopbackCase struct {
	name  string
	n     int
	gap   time.Duration
	opt   Options
	loops int
	want  time.Duration // expected duration of the run
}

func TestSendLoopback(t *testing.T) {
	tests := []loopbackCase{
		{"original timing", 200, 2 * time.Millisecond, Options{}, 1, 398 * time.Millisecond},
		{"speed 4", 200, 8 * time.Millisecond, Options{Speed: 4}, 1, 398 * time.Millisecond},
		{"pps 1000", 300, time.Second, Options{PPS: 1000}, 1, 299 * time.Millisecond},
		{"asap, 3 loops", 500, time.Second, Options{ASAP: true, Loop: 3}, 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Correctness is checked on every attempt; timing, which a
			// busy machine can spoil, gets three.
			for attempt := 1; ; attempt++ {
				msg := sendOnce(t, tt)
				if msg == "" {
					return
				}
				if attempt == 3 {
					t.Error(msg)
					return
				}
				t.Logf("attempt %d: %s; again", attempt, msg)
			}
		})
	}
}

// sendOnce sends a case's datagrams over loopback and checks that every one
// arrives, in order, unchanged. It returns what is wrong with the timing,
// or "".
func sendOnce(t *testing.T, tt loopbackCase) string {
	t.Helper()
	l := listen(t)
	c := dial(t, l.LocalAddr())
	ds := sequence(tt.n, tt.gap)
	got := make(chan [][]byte, 1)
	times := make([]time.Time, 0, tt.n*tt.loops)
	go func() {
		var rx [][]byte
		buf := make([]byte, 2048)
		for len(rx) < tt.n*tt.loops {
			l.SetReadDeadline(time.Now().Add(3 * time.Second))
			n, err := l.Read(buf)
			if err != nil {
				break
			}
			times = append(times, time.Now())
			rx = append(rx, bytes.Clone(buf[:n]))
		}
		got <- rx
	}()
	progress := 0
	opt := tt.opt
	opt.Progress = func(n int) { progress = n }
	st, err := Send(context.Background(), c, ds, opt)
	if err != nil {
		t.Fatal(err)
	}
	rx := <-got
	if len(rx) != tt.n*tt.loops {
		t.Fatalf("received %d datagrams, want %d", len(rx), tt.n*tt.loops)
	}
	for i, p := range rx {
		if !bytes.Equal(p, ds[i%tt.n].Payload) {
			t.Fatalf("datagram %d: got %q…, want %q…", i, p[:8], ds[i%tt.n].Payload[:8])
		}
	}
	if st.Datagrams != tt.n*tt.loops || progress != tt.n*tt.loops || st.Failed() != 0 {
		t.Errorf("stats: %d datagrams, progress %d, %d failed", st.Datagrams, progress, st.Failed())
	}
	if tt.opt.ASAP {
		if len(st.Errors) != 0 {
			t.Errorf("asap recorded %d send-time errors", len(st.Errors))
		}
		t.Logf("asap: %.0f datagrams/s", st.Rate())
		return ""
	}
	if len(st.Errors) != tt.n {
		t.Fatalf("%d send-time errors recorded, want %d", len(st.Errors), tt.n)
	}
	// The receiver's view: arrival of datagram i against its
	// due time after the first arrival.
	var worst time.Duration
	for i, at := range times {
		due := time.Duration(float64(ds[i].Offset) / max(tt.opt.Speed, 1))
		if tt.opt.PPS > 0 {
			due = time.Duration(float64(i) / tt.opt.PPS * float64(time.Second))
		}
		worst = max(worst, (at.Sub(times[0]) - due).Abs())
	}
	run := times[len(times)-1].Sub(times[0])
	t.Logf("send-time error p50 %v p99 %v max %v; receiver's worst %v; run %v", st.Quantile(0.5), st.Quantile(0.99), st.Max(), worst, run)
	// Bounds loose enough for a loaded CI machine; the figures
	// on a quiet one are in the log and the README.
	if st.Quantile(0.5) < 0 || st.Quantile(0.5) > 20*time.Millisecond {
		return fmt.Sprintf("send-time error p50 %v p99 %v", st.Quantile(0.5), st.Quantile(0.99))
	}
	if d := (run - tt.want).Abs(); d > 50*time.Millisecond {
		return fmt.Sprintf("run took %v, want %v", run, tt.want)
	}
	return ""
}

func TestSendCountsRefused(t *testing.T) {
	l := listen(t)
	addr := l.LocalAddr()
	l.Close() // nobody listens: each send draws an ICMP port unreachable
	c := dial(t, addr)
	st, err := Send(context.Background(), c, sequence(20, time.Millisecond), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Refused == 0 || st.Datagrams == 0 || st.Other != 0 {
		t.Errorf("refused %d, sent %d, other %d (%v); want some refused, some sent", st.Refused, st.Datagrams, st.Other, st.LastErr)
	}
}

func TestSendStopsWithContext(t *testing.T) {
	l := listen(t)
	c := dial(t, l.LocalAddr())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	st, err := Send(ctx, c, sequence(10, time.Second), Options{Forever: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > time.Second || st.Datagrams != 1 {
		t.Errorf("stopped after %v with %d sent, want about 100ms and 1", d, st.Datagrams)
	}
}

func TestSendRejectsNegative(t *testing.T) {
	for _, opt := range []Options{{Speed: -1}, {PPS: -2}, {Loop: -1}} {
		if _, err := Send(context.Background(), nil, sequence(1, 0), opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
}

func ExampleSend() {
	rx, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer rx.Close()
	conn, _ := net.Dial("udp", rx.LocalAddr().String())
	defer conn.Close()
	ds := []Datagram{
		{Offset: 0, Payload: []byte("1234")},
		{Offset: 40 * time.Millisecond, Payload: []byte("cjon")},
	}
	st, _ := Send(context.Background(), conn, ds, Options{Speed: 4}) // the second 10 ms after the first
	fmt.Println(st.Datagrams, st.Bytes)
	// Output: 2 8
}
