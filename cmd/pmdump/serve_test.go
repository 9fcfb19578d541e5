package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
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
func joinServe(t *testing.T, ctx context.Context, addr string, era decode.Era) *gameclient.Client {
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
		era    decode.Era
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
