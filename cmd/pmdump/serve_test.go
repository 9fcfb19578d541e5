package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
	"github.com/pmdump/pmdump/serve"
)

// freePort returns a loopback UDP address nobody listens on.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.LocalAddr().String()
}

// sentTruth reads a bundled sample's server ground truth: the sha256 of
// every state sent to player, by level sequence and frame.
func sentTruth(t *testing.T, file string, player int) map[[2]int]string {
	t.Helper()
	data, err := os.ReadFile("../../captures/" + file)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]int]string{}
	for _, r := range rows[1:] {
		if r[0] != strconv.Itoa(player) {
			continue
		}
		dst, _ := strconv.Atoi(r[2])
		slsn := 0
		if len(r) > 6 {
			slsn, _ = strconv.Atoi(r[6])
		}
		out[[2]int{slsn, dst}] = r[5]
	}
	return out
}

// joinServe joins a pmdump serve that may still be starting.
func joinServe(t *testing.T, ctx context.Context, addr string, era decode.Version) *gameclient.Client {
	t.Helper()
	for {
		c, err := gameclient.Join(ctx, addr, gameclient.Options{Era: era, Color: 5, Hostname: "test"})
		if err == nil {
			return c
		}
		if ctx.Err() != nil {
			t.Fatalf("join: %v", err)
		}
	}
}

func TestServeCommand(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		era    decode.Version
		truth  string
		player int
		from   [2]int // first state expected (level sequence, frame), 0 0 for the first
	}{
		{"legacy", []string{"sample:legacy", "--player", "2"}, decode.Legacy, "legacy_server_gt.csv", 2, [2]int{}},
		{"modern from a frame", []string{"sample:modern", "--player", "1", "--from", "40", "--slsn", "1"}, decode.Modern, "modern_server_gt.csv", 1, [2]int{1, 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			truth := sentTruth(t, tt.truth, tt.player)
			want, end := 0, [2]int{}
			for k := range truth {
				if k[0] > tt.from[0] || k[0] == tt.from[0] && k[1] >= tt.from[1] {
					want++
				}
				if k[0] > end[0] || k[0] == end[0] && k[1] > end[1] {
					end = k
				}
			}
			addr := freePort(t)
			var out, errb bytes.Buffer
			code := make(chan int, 1)
			args := append([]string{"serve", "--listen", addr, "--speed", "8", "--exit-when-done"}, tt.args...)
			go func() { code <- run(args, &out, &errb) }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c := joinServe(t, ctx, addr, tt.era)
			defer c.Close()
			err := c.Run(ctx, 3*time.Second, func(c *gameclient.Client) bool {
				n := len(c.Applied)
				return n > 0 && int(c.Applied[n-1].Dst) == end[1] && (tt.era == decode.Legacy || c.Applied[n-1].SLSN == end[0])
			})
			if err != nil {
				t.Fatalf("client: %v after %d of %d states", err, len(c.Applied), want)
			}
			// The samples were made with loss: a few difs the server sent
			// never reached the capture point, so they cannot be served.
			if len(c.Applied) < want*95/100 {
				t.Errorf("client applied %d states, want nearly all %d the server sent", len(c.Applied), want)
			}
			for i, a := range c.Applied {
				k := [2]int{a.SLSN, int(a.Dst)}
				if tt.era == decode.Legacy {
					k[0] = 0
				}
				if truth[k] != hex.EncodeToString(a.Sum[:]) {
					t.Fatalf("state %d %v: sha256 differs from the ground truth", i, k)
				}
			}
			if a := c.Applied[0]; a.SLSN != tt.from[0] || int(a.Dst) < tt.from[1] {
				t.Errorf("first state %d:%d, want from %v", a.SLSN, a.Dst, tt.from)
			}
			select {
			case n := <-code:
				if n != 0 {
					t.Fatalf("exit %d: %s", n, errb.String())
				}
			case <-time.After(8 * time.Second):
				t.Fatal("serve --exit-when-done did not exit")
			}
			if !strings.Contains(out.String(), "serving player "+strconv.Itoa(tt.player)) || !strings.Contains(errb.String(), "joined as player") {
				t.Errorf("output %q, stderr %q", out.String(), errb.String())
			}
		})
	}
}

func TestServeUsage(t *testing.T) {
	checkExits(t, []exitCase{
		{[]string{"serve", "sample:modern"}, exitUsage},
		{[]string{"serve", "sample:modern", "--player", "5"}, exitUsage},
		{[]string{"serve", "sample:modern", "--player", "1", "--slsn", "1"}, exitUsage},
		{[]string{"serve", "sample:modern", "--player", "1", "--from", "99999"}, exitUsage},
		{[]string{"serve", "sample:modern", "--player", "1", "--speed", "-2"}, exitUsage},
		{[]string{"serve", "sample:modern", "--player", "1", "--conv", "2"}, exitUsage},
		{[]string{"serve", "/nonexistent.pcap", "--player", "1"}, exitUnreadable},
	})
}

func TestServeAmbiguousPlayer(t *testing.T) {
	// The sample twice: player 1 is the client of two conversations.
	_, errs, code := pmdump("serve", "sample:legacy", "sample:legacy", "--player", "1", "--listen", freePort(t))
	if code != exitUsage || !strings.Contains(errs, "player 1 matches 2 conversations: 1 (10.0.0.2:24785), 3 (10.0.0.2:24785); choose one with --conv") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestServeListenNote(t *testing.T) {
	tests := []struct {
		addr string
		all  bool
	}{
		{":24785", true},
		{"0.0.0.0:24785", true},
		{"[::]:24785", true},
		{"127.0.0.1:24785", false},
		{"[::1]:24785", false},
	}
	for _, tt := range tests {
		a, err := net.ResolveUDPAddr("udp", tt.addr)
		if err != nil {
			t.Fatal(err)
		}
		note := listenNote(a)
		if got := strings.Contains(note, "all interfaces"); got != tt.all {
			t.Errorf("%s: note %q", tt.addr, note)
		}
	}
}

func TestServeStatusLine(t *testing.T) {
	c := netip.MustParseAddrPort("127.0.0.1:24786")
	joined := serve.ClientStatus{Client: c, Player: 1, Joined: true, SentSLSN: 1, SentAt: 544, AckSLSN: 1, AckFrame: 543, Behind: 1}
	pending := serve.ClientStatus{Client: netip.MustParseAddrPort("10.0.0.9:24785"), AckFrame: -1, Behind: -1}
	squatter := serve.ClientStatus{Client: netip.MustParseAddrPort("10.0.0.7:24785"), Player: 1, Joined: true, SentAt: 130, AckFrame: -1, Behind: -1, Held: 52}
	tests := []struct {
		st   []serve.ClientStatus
		n    serve.Counts
		want string
	}{
		{nil, serve.Counts{}, "waiting for clients"},
		{[]serve.ClientStatus{joined, pending, pending}, serve.Counts{Dropped: 7, TimedOut: 4000, Evicted: 12},
			"127.0.0.1:24786 p1 sent 1:544 ack 1:543 (1 behind) | 2 joining | gone: 7 dropped, 4000 handshakes timed out, 12 evicted"},
		{[]serve.ClientStatus{pending}, serve.Counts{Finished: 1}, "waiting for clients | 1 joining | gone: 1 finished"},
		{[]serve.ClientStatus{squatter}, serve.Counts{}, "10.0.0.7:24785 p1 sent 0:130 no ack, 52 held back"},
	}
	for _, tt := range tests {
		if got := statusLine(tt.st, tt.n); got != tt.want {
			t.Errorf("status line\n%q, want\n%q", got, tt.want)
		}
	}
}

// TestServeExitWaitsForJoin checks that --exit-when-done waits for a client
// that has shaken hands and not joined yet, as the real client does for
// most of a second, and serves it the whole recording.
func TestServeExitWaitsForJoin(t *testing.T) {
	var last int32 // the last state the server sent player 1
	for k := range sentTruth(t, "legacy_server_gt.csv", 1) {
		last = max(last, int32(k[1]))
	}
	addr := freePort(t)
	var out, errb bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"serve", "sample:legacy", "--player", "1", "--listen", addr, "--speed", "8", "--exit-when-done"}, &out, &errb)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first := joinServe(t, ctx, addr, decode.Legacy)
	defer first.Close()
	// The second client shakes hands now and joins once the first has
	// been served everything.
	late, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	lateAddr := late.LocalAddr().(*net.UDPAddr).AddrPort()
	listen := netip.MustParseAddrPort(addr)
	late.WriteToUDPAddrPort([]byte("1234"), listen)
	late.SetReadDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 64)
	if n, _, err := late.ReadFromUDPAddrPort(buf); err != nil || string(buf[:min(n, 4)]) != "5678" {
		t.Fatalf("no 5678 for the second client: %v", err)
	}
	late.Close()
	var rec int
	err = first.Run(ctx, 3*time.Second, func(c *gameclient.Client) bool {
		n := len(c.Applied)
		return n > 0 && c.Applied[n-1].Dst == last
	})
	if err != nil {
		t.Fatalf("first client: %v", err)
	}
	rec = len(first.Applied)
	time.Sleep(700 * time.Millisecond) // beyond the first client's end
	select {
	case n := <-code:
		t.Fatalf("serve exited (%d) before the second client joined: %s", n, errb.String())
	default:
	}
	second, err := gameclient.Join(ctx, addr, gameclient.Options{Era: decode.Legacy, Color: 4, Hostname: "late", Local: lateAddr})
	if err != nil {
		t.Fatalf("second client: %v", err)
	}
	defer second.Close()
	err = second.Run(ctx, 3*time.Second, func(c *gameclient.Client) bool {
		n := len(c.Applied)
		return n > 0 && c.Applied[n-1].Dst == last
	})
	if err != nil || len(second.Applied) != rec {
		t.Fatalf("second client: %v, %d states applied, want %d", err, len(second.Applied), rec)
	}
	select {
	case n := <-code:
		if n != 0 {
			t.Fatalf("exit %d: %s", n, errb.String())
		}
	case <-time.After(8 * time.Second):
		t.Fatal("serve --exit-when-done did not exit")
	}
}
