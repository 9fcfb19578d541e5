package main

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/synth"
)

type datagramAt struct {
	ts       time.Time
	src, dst netip.AddrPort
	payload  []byte
}

type collect struct{ dgs []datagramAt }

func (c *collect) WriteDatagram(ts time.Time, src, dst netip.AddrPort, p []byte) error {
	c.dgs = append(c.dgs, datagramAt{ts, src, dst, append([]byte(nil), p...)})
	return nil
}

// A synthetic game with loss, then reordered and duplicated on the way to
// the capture: every dif whose pieces all reached the capture rebuilds to
// exactly the state the generator sent, and every state a client applied
// is rebuilt.
func TestSyntheticLossReorderDuplicate(t *testing.T) {
	t.Parallel()
	for _, era := range []decode.Version{decode.Legacy, decode.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			cfg := synth.Config{Era: era, Players: 3, Duration: 8 * time.Second, Loss: 0.05, Seed: 42}
			if era == decode.Legacy {
				cfg.Duration = 20 * time.Second
			}
			var c collect
			truth := synth.NewTruth(cfg)
			if _, err := synth.Generate(cfg, &c, truth); err != nil {
				t.Fatal(err)
			}
			// Reorder within windows of 6 datagrams, duplicate 3 %.
			r := rand.New(rand.NewPCG(7, 7))
			var out []datagramAt
			for i := 0; i < len(c.dgs); i += 6 {
				w := append([]datagramAt(nil), c.dgs[i:min(i+6, len(c.dgs))]...)
				// Keep the handshake in order: reordering it is not what a LAN does.
				if i > 40 {
					r.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
				}
				for _, d := range w {
					out = append(out, d)
					if r.Float64() < 0.03 {
						out = append(out, d)
					}
				}
			}
			path := filepath.Join(t.TempDir(), "game.pcap")
			f, _ := os.Create(path)
			cw, err := synth.NewCaptureWriter(f, synth.Pcap)
			if err != nil {
				t.Fatal(err)
			}
			for i, d := range out {
				// Time stamps stay increasing, as a capture's are.
				if err := cw.WriteDatagram(c.dgs[0].ts.Add(time.Duration(i)*time.Millisecond), d.src, d.dst, d.payload); err != nil {
					t.Fatal(err)
				}
			}
			cw.Flush()
			f.Close()

			sent := map[string]string{} // player/slsn/dst → sha256
			for _, row := range truth.Server {
				slsn := row.SLSN
				if era == decode.Legacy {
					slsn = 0
				}
				sent[fmt.Sprintf("%d/%d/%d", row.Player, slsn, row.Dst)] = hex.EncodeToString(row.SHA256[:])
			}
			outJSON, errs, code := pmdump("states", "--json", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			got := map[string]string{}
			statuses := map[string]int{}
			sc := bufio.NewScanner(strings.NewReader(outJSON))
			for sc.Scan() {
				var s struct {
					Player, SLSN, Dst int
					Status, SHA256    string
				}
				if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
					t.Fatal(err)
				}
				statuses[s.Status]++
				if s.Status != "ok" {
					continue
				}
				k := fmt.Sprintf("%d/%d/%d", s.Player, s.SLSN, s.Dst)
				got[k] = s.SHA256
				if want, ok := sent[k]; !ok {
					t.Errorf("state %s rebuilt, never sent", k)
				} else if want != s.SHA256 {
					t.Errorf("state %s: sha256 %s, generator sent %s", k, s.SHA256, want)
				}
			}
			if statuses["corrupt"] > 0 || statuses["missing-base"] > 0 || statuses["ok"] == 0 {
				t.Errorf("statuses %v", statuses)
			}
			applied := 0
			for pl, rows := range truth.Clients {
				for _, row := range rows {
					slsn := row.SLSN
					if era == decode.Legacy {
						slsn = 0
					}
					applied++
					k := fmt.Sprintf("%d/%d/%d", pl, slsn, row.Dst)
					if got[k] != hex.EncodeToString(row.SHA256[:]) {
						t.Errorf("state %s that the client applied is not rebuilt", k)
					}
				}
			}
			t.Logf("%d datagrams (%d after duplication), statuses %v, %d applied states all rebuilt", len(c.dgs), len(out), statuses, applied)
		})
	}
}

func TestSynthCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "g.pcapng")
	_, errs, code := pmdump("synth", "-o", out, "--players", "2", "--duration", "3s", "--era", "modern", "--seed", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for _, f := range []string{"g_server_gt.csv", "g_c1_client_gt.csv", "g_c2_client_gt.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("ground truth %s not written: %v", f, err)
		}
	}
	res, errs, code := pmdump("states", out, "--verify", filepath.Join(dir, "g_c2_client_gt.csv"), "--player", "2")
	if code != 0 || !strings.Contains(res, " 0 mismatched, 0 missing") {
		t.Errorf("verify: exit %d %s\n%s", code, errs, res)
	}
	data, _ := os.ReadFile(out)
	if string(data[:4]) != "\x0a\x0d\x0d\x0a" {
		t.Errorf(".pcapng did not give pcapng")
	}
	for _, bad := range [][]string{
		{"synth", "-o", out, "--players", "8"},
		{"synth", "-o", out, "--players", "0"},
		{"synth", "-o", out, "--duration", "0s"},
		{"synth", "-o", out, "--loss", "1"},
		{"synth", "-o", out, "--era", "future"},
		{"synth", "--players", "2"},
	} {
		if _, _, code := pmdump(bad...); code != 1 {
			t.Errorf("%v: exit %d, want 1", bad, code)
		}
	}
}
