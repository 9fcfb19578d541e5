package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/realcap"
)

// gameServer listens on loopback as the game's server does: it answers
// each handshake (1234) from a new socket of its own, and records every
// datagram it receives with the client endpoint it came from and whether it
// came to the listening port.
type gameServer struct {
	addr string
	mu   sync.Mutex
	rx   []serverRx
}

type serverRx struct {
	client  string
	listen  bool
	payload []byte
}

func newGameServer(t *testing.T) *gameServer {
	t.Helper()
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	l.SetReadBuffer(8 << 20)
	g := &gameServer{addr: l.LocalAddr().String()}
	var socks []*net.UDPConn
	var wg sync.WaitGroup
	closed := false
	t.Cleanup(func() {
		l.Close()
		g.mu.Lock()
		closed = true
		for _, c := range socks {
			c.Close()
		}
		g.mu.Unlock()
		wg.Wait()
	})
	var read func(c *net.UDPConn, listen bool)
	read = func(c *net.UDPConn, listen bool) {
		defer wg.Done()
		buf := make([]byte, 4096)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			g.mu.Lock()
			g.rx = append(g.rx, serverRx{from.String(), listen, bytes.Clone(buf[:n])})
			g.mu.Unlock()
			if listen && string(buf[:n]) == "1234" {
				own, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					return
				}
				own.SetReadBuffer(8 << 20)
				own.WriteToUDP([]byte("5678"), from)
				g.mu.Lock()
				if closed { // the test is over
					g.mu.Unlock()
					own.Close()
					return
				}
				socks = append(socks, own)
				wg.Add(1)
				g.mu.Unlock()
				go read(own, false)
			}
		}
	}
	wg.Add(1)
	go read(l, true)
	return g
}

// received waits until want datagrams have come (or none for a second).
func (g *gameServer) received(want int) []serverRx {
	last, n := time.Now(), 0
	for time.Since(last) < time.Second {
		g.mu.Lock()
		m := len(g.rx)
		g.mu.Unlock()
		if m >= want {
			break
		}
		if m != n {
			last, n = time.Now(), m
		}
		time.Sleep(10 * time.Millisecond)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.rx)
}

// recordedC2S returns the payloads each client sent in a capture, by
// conversation number, as pmdump read sees them.
func recordedC2S(t *testing.T, path string) map[int][][]byte {
	t.Helper()
	var stats, stderr bytes.Buffer
	if code := run([]string{"stats", "--json", path}, &stats, &stderr); code != exitOK {
		t.Fatalf("pmdump stats: exit %d: %s", code, stderr.String())
	}
	var sum struct {
		Conversations []struct {
			ID int `json:"id"`
		} `json:"conversations"`
	}
	if err := json.Unmarshal(stats.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	out := map[int][][]byte{}
	for _, c := range sum.Conversations {
		var js bytes.Buffer
		if code := run([]string{"read", "--json", "-x", "-Y", fmt.Sprintf("c2s and conv == %d", c.ID), path}, &js, &stderr); code != exitOK {
			t.Fatalf("pmdump read: exit %d: %s", code, stderr.String())
		}
		dec := json.NewDecoder(&js)
		for dec.More() {
			var p struct{ Raw string }
			if err := dec.Decode(&p); err != nil {
				t.Fatal(err)
			}
			b, err := hex.DecodeString(p.Raw)
			if err != nil {
				t.Fatal(err)
			}
			out[c.ID] = append(out[c.ID], b)
		}
	}
	return out
}

// The clients of a capture are played to a game server: each recorded
// conversation from a client socket of its own, its handshake to the
// listening port, the rest to the port the server answered from, every
// payload in its recorded order.
func TestReplayConversationsApart(t *testing.T) {
	path := realcap.Path(t, "modern/multi/multi.pcap")
	want := recordedC2S(t, path)
	total := 0
	for _, ps := range want {
		total += len(ps)
	}
	g := newGameServer(t)
	var out, errb bytes.Buffer
	if code := run([]string{"replay", path, "--to", g.addr, "--dir", "c2s", "--speed", "100"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	rx := g.received(total)
	if len(rx) != total {
		t.Fatalf("the server received %d datagrams, want %d", len(rx), total)
	}
	byClient := map[string][][]byte{}
	var clients []string
	for _, r := range rx {
		if (string(r.payload) == "1234") != r.listen {
			t.Errorf("%q from %s came to the listening port: %v", r.payload[:4], r.client, r.listen)
		}
		if byClient[r.client] == nil {
			clients = append(clients, r.client)
		}
		byClient[r.client] = append(byClient[r.client], r.payload)
	}
	if len(clients) != len(want) {
		t.Fatalf("%d client endpoints, want %d (one per conversation)", len(clients), len(want))
	}
	for i, c := range clients {
		w := want[i+1]
		if len(byClient[c]) != len(w) {
			t.Errorf("client %s sent %d datagrams, conversation %d has %d", c, len(byClient[c]), i+1, len(w))
			continue
		}
		for k := range w {
			if !bytes.Equal(byClient[c][k], w[k]) {
				t.Errorf("client %s datagram %d differs from conversation %d's", c, k, i+1)
				break
			}
		}
	}
	if !strings.Contains(out.String(), fmt.Sprintf("sent %d datagrams", total)) || !strings.Contains(out.String(), fmt.Sprintf("conversations: %d, each from its own socket", len(want))) {
		t.Errorf("summary: %q", out.String())
	}
	t.Logf("%s", strings.TrimSpace(out.String()))
}

// Errors the network reports are counted in every mode: every datagram
// sent to a closed port draws a port unreachable.
func TestReplayCountsRefused(t *testing.T) {
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	addr := l.LocalAddr().String()
	l.Close()
	for _, mode := range [][]string{{"--speed", "50"}, {"--asap"}} {
		t.Run(mode[0], func(t *testing.T) {
			t.Parallel()
			var out, errb bytes.Buffer
			args := append([]string{"replay", "sample:modern", "--to", addr, "--dir", "c2s"}, mode...)
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			m := regexp.MustCompile(`sent (\d+) datagrams.*\n(?s:.*)network errors: (\d+) refused`).FindStringSubmatch(out.String())
			if m == nil {
				t.Fatalf("no refused count in %q", out.String())
			}
			sent, _ := strconv.Atoi(m[1])
			refused, _ := strconv.Atoi(m[2])
			if sent == 0 || refused < sent*9/10 {
				t.Errorf("%d sent, %d refused: want about one refusal each", sent, refused)
			}
		})
	}
}

func TestReplaySelects(t *testing.T) {
	tests := []struct {
		args []string
		read string // the -Y filter of pmdump read that selects the same packets
		max  int    // -c
	}{
		{[]string{"--dir", "s2c"}, "s2c", 0},
		{[]string{"--dir", "c2s", "--conv", "2"}, "c2s and conv == 2", 0},
		{[]string{"-Y", "stdf and src == 0"}, "stdf and src == 0", 0},
		{[]string{"-c", "25"}, "", 25},
		{[]string{"-c", "25", "--loop", "0"}, "", 25},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			want := tt.max
			if tt.read != "" {
				var listing bytes.Buffer
				if code := run([]string{"read", "-Y", tt.read, "sample:modern"}, &listing, io.Discard); code != 0 {
					t.Fatalf("read exit %d", code)
				}
				want = strings.Count(listing.String(), "\n")
			}
			g := newGameServer(t)
			var out, errb bytes.Buffer
			args := append([]string{"replay", "sample:modern", "--to", g.addr, "--asap"}, tt.args...)
			if code := run(args, &out, &errb); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if want == 0 || !strings.Contains(out.String(), fmt.Sprintf("sent %d datagrams", want)) {
				t.Errorf("want %d sent: %q", want, out.String())
			}
		})
	}
}

func TestReplayUsage(t *testing.T) {
	checkExits(t, []exitCase{
		{[]string{"replay", "sample:modern"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--asap", "--pps", "10"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--speed", "0"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--dir", "up"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "-Y", "stdf and"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--conv", "9"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "--loop", "-1"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "127.0.0.1:9", "-c", "-1"}, exitUsage},
		{[]string{"replay", "sample:modern", "--to", "0.0.0.0:9"}, exitUsage},
		{[]string{"replay", "/nonexistent.pcap", "--to", "127.0.0.1:9"}, exitUnreadable},
	})
}
