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

// fleet makes a fleet for a server at addr, closed when the test ends.
func fleet(t *testing.T, addr net.Addr, serverSide bool) *Fleet {
	t.Helper()
	f, err := NewFleet(addr.(*net.UDPAddr), serverSide)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// slicePass streams ds.
func slicePass(ds []Datagram) Pass {
	return func(ctx context.Context, yield func(Datagram) bool) error {
		for _, d := range ds {
			if !yield(d) {
				return nil
			}
		}
		return nil
	}
}

// sequence makes n datagrams of varied sizes, gap apart, each payload
// telling its index.
func sequence(n int, gap time.Duration) []Datagram {
	ds := make([]Datagram, n)
	for i := range ds {
		p := fmt.Appendf(nil, "dg%06d", i)
		p = append(p, bytes.Repeat([]byte{byte(i)}, i%900)...)
		ds[i] = Datagram{Offset: time.Duration(i) * gap, Payload: p, Conv: 1, Listen: true}
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
	f := fleet(t, l.LocalAddr(), false)
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
	st, err := Run(context.Background(), f, slicePass(ds), opt)
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
	if len(st.Errors) != tt.n*tt.loops {
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

// Every datagram sent to a closed port draws an ICMP port unreachable, and
// each is counted, paced or as fast as possible.
func TestRunCountsRefused(t *testing.T) {
	for _, opt := range []Options{{PPS: 5000}, {ASAP: true}} {
		t.Run(fmt.Sprintf("asap=%v", opt.ASAP), func(t *testing.T) {
			l := listen(t)
			addr := l.LocalAddr()
			l.Close() // nobody listens
			f := fleet(t, addr, false)
			st, err := Run(context.Background(), f, slicePass(sequence(300, time.Millisecond)), opt)
			if err != nil {
				t.Fatal(err)
			}
			if st.Datagrams != 300 || st.Refused < 290 || st.Other != 0 {
				t.Errorf("sent %d, refused %d, other %d (%v); want 300 sent and about as many refused", st.Datagrams, st.Refused, st.Other, st.LastErr)
			}
		})
	}
}

// Each conversation has its own client socket, and the client role is kept:
// the handshake goes to the server's address, the rest to the port the
// server answered it from, as a real game server answers from a new port.
func TestRunConversationsApart(t *testing.T) {
	srv := listen(t)
	type rx struct {
		from    string
		at      string
		payload string
	}
	got := make(chan rx, 100)
	go func() { // a game server: a new socket for each client
		buf := make([]byte, 2048)
		for {
			n, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			got <- rx{from.String(), "listen", string(buf[:n])}
			c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			c.WriteToUDP([]byte("5678"), from)
			go func() {
				b := make([]byte, 2048)
				for {
					n, from, err := c.ReadFromUDP(b)
					if err != nil {
						return
					}
					got <- rx{from.String(), "own", string(b[:n])}
				}
			}()
		}
	}()
	f := fleet(t, srv.LocalAddr(), false)
	pass := func(ctx context.Context, yield func(Datagram) bool) error {
		ms := time.Millisecond
		for _, d := range []Datagram{
			{Offset: 0, Conv: 1, Listen: true, Payload: []byte("1234")},
			{Offset: 1 * ms, Conv: 2, Listen: true, Payload: []byte("1234")},
			{Offset: 2 * ms, Conv: 1, Server: true, Payload: []byte("5678")}, // the server's: skipped
			{Offset: 60 * ms, Conv: 1, Payload: []byte("cjon 1")},
			{Offset: 61 * ms, Conv: 2, Payload: []byte("cjon 2")},
			{Offset: 62 * ms, Conv: 2, Payload: []byte("cdat 2")},
		} {
			if !yield(d) {
				return nil
			}
		}
		return nil
	}
	st, err := Run(context.Background(), f, pass, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Datagrams != 5 || st.Skipped != 1 || st.Convs != 2 {
		t.Errorf("stats: %d sent, %d skipped, %d conversations; want 5, 1, 2", st.Datagrams, st.Skipped, st.Convs)
	}
	client := map[string]string{} // payload's conversation → client endpoint
	var seen []string
	for range 5 {
		select {
		case r := <-got:
			conv := r.payload[len(r.payload)-1:]
			if r.payload == "1234" {
				if r.at != "listen" {
					t.Errorf("handshake at the %s socket", r.at)
				}
				conv = fmt.Sprint(len(client) + 1)
			} else if r.at != "own" {
				t.Errorf("%q went to the listening port, not the client's server port", r.payload)
			}
			if c, ok := client[conv]; ok && c != r.from {
				t.Errorf("%q from %s, conversation %s's client is %s", r.payload, r.from, conv, c)
			}
			client[conv] = r.from
			seen = append(seen, r.payload)
		case <-time.After(2 * time.Second):
			t.Fatalf("received only %q", seen)
		}
	}
	if client["1"] == client["2"] {
		t.Errorf("both conversations from %s", client["1"])
	}
}

// With the server's address on this machine and the server's datagrams
// sent, each conversation gets a server socket on that address: the
// server's datagrams reach the client's socket from it, and the client's
// (after the handshake) go to it.
func TestRunLocalServer(t *testing.T) {
	srv := listen(t)
	f := fleet(t, srv.LocalAddr(), true)
	if !f.Local() {
		t.Fatal("127.0.0.1 is not local")
	}
	ds := []Datagram{
		{Conv: 7, Listen: true, Payload: []byte("1234")},
		{Conv: 7, Server: true, Payload: []byte("5678")},
		{Conv: 7, Payload: []byte("cjon")},
	}
	st, err := Run(context.Background(), f, slicePass(ds), Options{ASAP: true})
	if err != nil || st.Datagrams != 3 || st.Skipped != 0 || st.Failed() != 0 {
		t.Fatalf("%v: %+v", err, st)
	}
	cs := f.byConv[7]
	buf := make([]byte, 64)
	cs.client.SetReadDeadline(time.Now().Add(time.Second))
	n, from, err := cs.client.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "5678" || from.String() != cs.server.LocalAddr().String() {
		t.Errorf("client socket got %q from %v (%v), want 5678 from %v", buf[:n], from, err, cs.server.LocalAddr())
	}
	cs.server.SetReadDeadline(time.Now().Add(time.Second))
	n, from, err = cs.server.ReadFromUDP(buf)
	if err != nil || string(buf[:n]) != "cjon" || from.String() != cs.client.LocalAddr().String() {
		t.Errorf("server socket got %q from %v (%v), want cjon from %v", buf[:n], from, err, cs.client.LocalAddr())
	}
	srv.SetReadDeadline(time.Now().Add(time.Second))
	if n, _, err := srv.ReadFromUDP(buf); err != nil || string(buf[:n]) != "1234" {
		t.Errorf("listening port got %q (%v), want 1234", buf[:n], err)
	}
}

func TestRunLimit(t *testing.T) {
	for _, opt := range []Options{{Limit: 7, PPS: 10000}, {Limit: 7, ASAP: true}, {Limit: 25, ASAP: true, Loop: 3}} {
		l := listen(t)
		f := fleet(t, l.LocalAddr(), false)
		st, err := Run(context.Background(), f, slicePass(sequence(10, time.Millisecond)), opt)
		if err != nil || st.Datagrams != opt.Limit {
			t.Errorf("%+v: sent %d (%v), want %d", opt, st.Datagrams, err, opt.Limit)
		}
	}
}

func TestRunStopsWithContext(t *testing.T) {
	l := listen(t)
	f := fleet(t, l.LocalAddr(), false)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	begin := time.Now()
	st, err := Run(ctx, f, slicePass(sequence(10, time.Second)), Options{Forever: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > time.Second || st.Datagrams != 1 {
		t.Errorf("stopped after %v with %d sent, want about 100ms and 1", d, st.Datagrams)
	}
}

func TestRunRejectsNegative(t *testing.T) {
	for _, opt := range []Options{{Speed: -1}, {PPS: -2}, {Loop: -1}, {Limit: -1}} {
		if _, err := Run(context.Background(), nil, slicePass(sequence(1, 0)), opt); err == nil {
			t.Errorf("%+v: no error", opt)
		}
	}
}

func ExampleRun() {
	rx, _ := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	defer rx.Close()
	f, _ := NewFleet(rx.LocalAddr().(*net.UDPAddr), false) // play the clients only
	defer f.Close()
	ds := []Datagram{
		{Offset: 0, Conv: 1, Listen: true, Payload: []byte("1234")},
		{Offset: 40 * time.Millisecond, Conv: 1, Payload: []byte("cjon")},
	}
	pass := func(ctx context.Context, yield func(Datagram) bool) error {
		for _, d := range ds {
			if !yield(d) {
				break
			}
		}
		return nil
	}
	st, _ := Run(context.Background(), f, pass, Options{Speed: 4}) // the second 10 ms after the first
	fmt.Println(st.Datagrams, st.Bytes, st.Convs)
	// Output: 2 8 1
}
