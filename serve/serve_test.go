package serve

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
	"github.com/pmdump/pmdump/internal/realcap"
)

// sharedFile returns a path in ../shared/captures (see internal/realcap).
func sharedFile(t testing.TB, rel string) string {
	t.Helper()
	return realcap.Path(t, rel)
}

// inputPath resolves a test input: a sample ("sample:…") as it is, else a
// real capture's path in ../shared/captures.
func inputPath(t testing.TB, input string) string {
	t.Helper()
	if strings.HasPrefix(input, "sample:") {
		return input
	}
	return sharedFile(t, input)
}

// servedRecording is a recording a test serves: the input (see
// inputPath), the player whose states are served, and how many are
// served (0: all).
type servedRecording struct {
	input  string
	player int
	states int
}

// load loads the recording, as load does.
func (s servedRecording) load(t *testing.T) *Recording {
	t.Helper()
	return load(t, inputPath(t, s.input), s.player)
}

type truthKey struct {
	slsn int
	dst  int32
}

// groundTruth reads a ground-truth CSV of either era: the rows of player
// (when the file has a player column), keyed by level sequence (0 when the
// file has none) and frame.
func groundTruth(t *testing.T, path string, player int) map[truthKey][32]byte {
	t.Helper()
	var data []byte
	var err error
	if name, ok := bytes.CutPrefix([]byte(path), []byte("sample:")); ok {
		data, err = os.ReadFile(filepath.Join("..", "captures", string(name)))
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("%s: %v (%d rows)", path, err, len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	pick := func(names ...string) int {
		for _, n := range names {
			if i, ok := col[n]; ok {
				return i
			}
		}
		return -1
	}
	dstC, sumC, slsnC, playerC := pick("dst_frame", "dst"), pick("sha256", "sha256_of_dst_state", "dst_state_sha256"), pick("slsn"), pick("player")
	if dstC < 0 || sumC < 0 {
		t.Fatalf("%s: no dst or sha256 column in %v", path, rows[0])
	}
	out := map[truthKey][32]byte{}
	for _, r := range rows[1:] {
		if playerC >= 0 && r[playerC] != strconv.Itoa(player) {
			continue
		}
		var k truthKey
		dst, _ := strconv.Atoi(r[dstC])
		k.dst = int32(dst)
		if slsnC >= 0 {
			k.slsn, _ = strconv.Atoi(r[slsnC])
		}
		var sum [32]byte
		if b, err := hex.DecodeString(r[sumC]); err != nil || len(b) != 32 {
			t.Fatalf("%s: bad sha256 %q", path, r[sumC])
		} else {
			copy(sum[:], b)
		}
		out[k] = sum
	}
	if len(out) == 0 {
		t.Fatalf("%s: no rows for player %d", path, player)
	}
	return out
}

var (
	loadMu sync.Mutex
	loaded = map[string]*Recording{}
)

// load loads a recording once for every test that serves it.
func load(t *testing.T, input string, player int) *Recording {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if abs, err := filepath.Abs(input); err == nil && !strings.HasPrefix(input, "sample:") {
		input = abs // one recording for every way to name its file
	}
	key := fmt.Sprint(input, player)
	if rec := loaded[key]; rec != nil {
		return rec
	}
	begin := time.Now()
	rec, err := Load([]string{input}, LoadOptions{Player: player})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded %d states in %v", len(rec.States), time.Since(begin).Round(time.Millisecond))
	loaded[key] = rec
	return rec
}

// watch serves rec to the clients over loopback UDP until each has the
// recording's last state, and returns the clients.
func watch(t *testing.T, rec *Recording, opt Options, copts []gameclient.Options, until func(*gameclient.Client) bool) ([]*gameclient.Client, []ClientStatus) {
	t.Helper()
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if opt.Logf == nil {
		opt.Logf = t.Logf
	}
	srv, err := New(rec, ln, opt)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()
	clients := make([]*gameclient.Client, len(copts))
	errs := make(chan error, len(copts))
	for i, co := range copts {
		c, err := gameclient.Join(ctx, ln.LocalAddr().String(), co)
		if err != nil {
			t.Fatalf("client %d: join: %v", i, err)
		}
		defer c.Close()
		clients[i] = c
		go func() { errs <- c.Run(ctx, 3*time.Second, until) }()
	}
	for range copts {
		if err := <-errs; err != nil {
			t.Errorf("client: %v", err)
		}
	}
	st := srv.Status()
	cancel()
	if err := <-served; err != nil {
		t.Errorf("serve: %v", err)
	}
	return clients, st
}

// lastOf returns a stop condition: the client applied the recording's last
// state (of round rounds-1).
func lastOf(rec *Recording, start, stop, rounds int) func(*gameclient.Client) bool {
	end := rec.States[stop-1]
	levels := end.Level - rec.States[start].Level + 1
	wantLevel := end.Level - rec.States[start].Level + (rounds-1)*levels
	return func(c *gameclient.Client) bool {
		n := len(c.Applied)
		return n > 0 && c.Applied[n-1].Dst == end.Frame && c.Applied[n-1].Level == wantLevel
	}
}

// dropEvery drops the first piece of the states whose frame is a multiple
// of n, as a lossy network would, but never one of a level's last state
// (after it the recording has nothing more to send).
func dropEvery(rec *Recording, n int) func(gameclient.Piece) bool {
	lastOfLevel := map[int32]bool{}
	for i, s := range rec.States {
		if i+1 == len(rec.States) || rec.States[i+1].Level != s.Level {
			lastOfLevel[s.Frame] = true
		}
	}
	return func(p gameclient.Piece) bool {
		return !lastOfLevel[p.Dst] && p.Seq == 0 && p.Dst%int32(n) == 0
	}
}

func TestServeToClients(t *testing.T) {
	tests := []struct {
		name    string
		input   string // "sample:…" or a file under ../shared/captures
		truth   []string
		player  int
		from    truthKey // first state served (level sequence, frame)
		states  int      // how many states are served (0: all)
		speed   float64
		clients int
		drop    int // drop every drop-th stdf piece of the first client (0: none)
	}{
		{"legacy sample", "sample:legacy", []string{"sample:legacy_server_gt.csv", "sample:legacy_c1_client_gt.csv"}, 1, truthKey{}, 0, 6, 1, 0},
		{"legacy sample lossy, 7 clients", "sample:legacy", []string{"sample:legacy_server_gt.csv", "sample:legacy_c2_client_gt.csv"}, 2, truthKey{}, 0, 6, 7, 4},
		{"modern sample", "sample:modern", []string{"sample:modern_server_gt.csv", "sample:modern_c2_client_gt.csv"}, 2, truthKey{}, 0, 6, 1, 0},
		{"modern sample lossy, 2 clients", "sample:modern", []string{"sample:modern_server_gt.csv", "sample:modern_c1_client_gt.csv"}, 1, truthKey{}, 0, 6, 2, 5},
		{"modern basic, level change", "modern/basic/basic.pcap", []string{"modern/basic/server_gt.csv", "modern/basic/c1_client_gt.csv"}, 1, truthKey{0, 150}, 200, 8, 1, 0},
		{"modern basic lossy, level change", "modern/basic/basic.pcap", []string{"modern/basic/server_gt.csv", "modern/basic/c1_client_gt.csv"}, 1, truthKey{0, 150}, 200, 8, 2, 7},
		{"legacy basic lossy", "legacy/basic/capture.pcap", []string{"legacy/basic/server/server_stdf_gt.csv", "legacy/basic/c1/client_gt.csv"}, 1, truthKey{0, 0}, 120, 20, 1, 3},
		// The versions without a handshake: every client is served from the
		// one listening socket, and follows the level change by the level
		// sequence and level on the pieces.
		{"2026-07 basic, level change", "head-2026-08/basic/capture.pcap", []string{"head-2026-08/basic/server_gt.csv", "head-2026-08/basic/c1_client_gt.csv"}, 1, truthKey{0, 895}, 150, 8, 2, 0},
		{"2026-07 basic lossy, level change", "head-2026-08/basic/capture.pcap", []string{"head-2026-08/basic/server_gt.csv", "head-2026-08/basic/c1_client_gt.csv"}, 1, truthKey{0, 895}, 0, 16, 2, 7},
		{"2024-06 basic, level change", "aug-2024/basic/capture.pcap", []string{"aug-2024/basic/server_gt.csv", "aug-2024/basic/c1_client_gt.csv"}, 1, truthKey{0, 1179}, 150, 8, 1, 0},
		{"2026-01 basic, level change", "jan-2026/basic/capture.pcap", []string{"jan-2026/basic/server_gt.csv", "jan-2026/basic/c1_client_gt.csv"}, 1, truthKey{0, 2232}, 150, 8, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := inputPath(t, tt.input)
			var truths []map[truthKey][32]byte
			for _, f := range tt.truth {
				truths = append(truths, groundTruth(t, inputPath(t, f), tt.player))
			}
			rec := load(t, input, tt.player)
			start, stop := 0, len(rec.States)
			if tt.from != (truthKey{}) {
				if start = rec.Find(tt.from.slsn, tt.from.dst); start < 0 {
					t.Fatalf("no state at %v", tt.from)
				}
			}
			if tt.states > 0 {
				stop = min(start+tt.states, stop)
			}
			served := stop - start
			copts := make([]gameclient.Options, tt.clients)
			for i := range copts {
				copts[i] = gameclient.Options{Era: rec.Era, Color: i + 1, Hostname: fmt.Sprintf("watcher%d", i)}
			}
			if tt.drop > 0 {
				copts[0].Drop = dropEvery(rec, tt.drop)
			}
			begin := time.Now()
			clients, status := watch(t, rec, Options{Speed: tt.speed, Start: start, Stop: stop}, copts, lastOf(rec, start, stop, 1))
			t.Logf("%d of %d states (%d levels, %d skipped) served in %v", served, len(rec.States), rec.Levels, rec.Skipped, time.Since(begin).Round(time.Millisecond))
			if rec.States[start].Level == rec.States[stop-1].Level && rec.Levels > 1 {
				t.Errorf("the states served have no level change")
			}
			for i, c := range clients {
				checkHeld(t, rec, start, c, truths)
				if c.Player != tt.player {
					t.Errorf("client %d joined as player %d, want %d", i, c.Player, tt.player)
				}
				if copts[i].Drop == nil && len(c.Applied) != served {
					t.Errorf("client %d applied %d states, want all %d", i, len(c.Applied), served)
				}
				if copts[i].Drop != nil && (c.Dropped == 0 || len(c.Applied) >= served) {
					t.Errorf("client %d: %d pieces dropped, %d of %d states applied", i, c.Dropped, len(c.Applied), served)
				}
				if rec.Era.Has(decode.KindGameMoves) && c.Sdats == 0 {
					t.Errorf("client %d received no sdat", i)
				}
				t.Logf("client %d: %d applied, %d dropped pieces, %d re-acks, %d pongs, %d sdat", i, len(c.Applied), c.Dropped, c.Reacks, c.Pongs, c.Sdats)
				if i < len(status) { // a client that never joined is not in it (checked below)
					t.Logf("server to client %d: %d sent, %d held, %d keyframes, %d acks, %d bytes", i, status[i].Sent, status[i].Held, status[i].Keyframes, status[i].Acks, status[i].Bytes)
				}
			}
			if rec.Era.Has(decode.KindProbe) && clients[0].Pongs == 0 {
				t.Errorf("no pong for the client's pings")
			}
			if len(status) != tt.clients {
				t.Errorf("%d clients in the status, want %d", len(status), tt.clients)
			}
		})
	}
}

// checkHeld checks every state a client applied against the recording and
// the ground truth.
func checkHeld(t *testing.T, rec *Recording, start int, c *gameclient.Client, truths []map[truthKey][32]byte) {
	t.Helper()
	type key struct {
		level int
		frame int32
	}
	want := map[key]State{}
	for _, s := range rec.States[start:] {
		want[key{s.Level - rec.States[start].Level, s.Frame}] = s
	}
	matched := make([]int, len(truths))
	for _, a := range c.Applied {
		s, ok := want[key{a.Level, a.Dst}]
		if !ok {
			t.Fatalf("client applied level %d frame %d, which the recording does not have", a.Level, a.Dst)
		}
		if a.Sum != s.Sum {
			t.Fatalf("client's state of level %d frame %d differs from the recorded one", a.Level, a.Dst)
		}
		k := truthKey{a.SLSN, a.Dst}
		if rec.Era == decode.Legacy {
			k.slsn = 0
		}
		for i, tr := range truths {
			sum, ok := tr[k]
			if !ok && i == 0 {
				// The first file lists every state the server sent.
				t.Fatalf("client's state %v is not in the server's ground truth", k)
			}
			if ok {
				if sum != a.Sum {
					t.Fatalf("client's state %v differs from the ground truth", k)
				}
				matched[i]++
			}
		}
	}
	for i, m := range matched {
		if m == 0 {
			t.Errorf("no state the client applied is in ground truth file %d", i)
		}
	}
	t.Logf("held states matching ground truth rows: %v", matched)
}

func TestServeLoop(t *testing.T) {
	for _, input := range []string{"sample:legacy", "sample:modern"} {
		t.Run(input, func(t *testing.T) { testLoop(t, input) })
	}
}

func testLoop(t *testing.T, input string) {
	rec := load(t, input, 1)
	stop := min(len(rec.States), 12)
	clients, _ := watch(t, rec, Options{Speed: 10, Stop: stop, Loop: true},
		[]gameclient.Options{{Era: rec.Era, Color: 3, Hostname: "looper"}}, lastOf(rec, 0, stop, 3))
	c := clients[0]
	if len(c.Applied) == 0 {
		t.Fatal("no state applied")
	}
	// Each round is a new level with the same states.
	byRound := map[int][]gameclient.Applied{}
	for _, a := range c.Applied {
		byRound[a.Level] = append(byRound[a.Level], a)
	}
	if len(byRound) != 3 {
		t.Fatalf("states in %d rounds, want 3", len(byRound))
	}
	for round, as := range byRound {
		for _, a := range as {
			found := false
			for _, s := range rec.States[:stop] {
				if s.Frame == a.Dst {
					found = s.Sum == a.Sum
				}
			}
			if !found {
				t.Fatalf("round %d frame %d: not the recorded state", round, a.Dst)
			}
		}
	}
	if n := len(byRound[1]); n != stop {
		t.Errorf("round 2: %d states applied, want %d", n, stop)
	}
	if rec.Era == decode.Modern {
		first := byRound[0][0].SLSN
		if got := byRound[2][0].SLSN; got != (first+2)&0xff {
			t.Errorf("round 3 in level sequence %d, want %d", got, first+2)
		}
	}
}
