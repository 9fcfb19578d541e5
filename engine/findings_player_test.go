package engine_test

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/synth"
)

// udpByPort counts a capture's UDP datagrams by (source port, destination
// port), read with gopacket alone.
func udpByPort(t *testing.T, path string) map[[2]uint16]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := map[[2]uint16]int{}
	for {
		data, _, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		p := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		if u, ok := p.Layer(layers.LayerTypeUDP).(*layers.UDP); ok {
			out[[2]uint16{uint16(u.SrcPort), uint16(u.DstPort)}]++
		}
	}
	return out
}

// On the real lossy captures the loss estimate of every client and
// direction holds the truth in its interval: the datagrams the impairment
// dropped over all that were sent (those it let through are the capture's).
func TestLossEstimateHoldsTruth(t *testing.T) {
	for _, tc := range []struct {
		dir     string
		capture string
	}{
		{"legacy/lossy", "capture.pcap"},
		{"head-2026-08/lossy_joinfail", "capture.pcap"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			path := realcap.Path(t, filepath.Join(tc.dir, tc.capture))
			dropped := map[[2]uint16]int{}
			for _, r := range readCSV(t, realcap.Path(t, filepath.Join(tc.dir, "impairment_log.csv"))) {
				if r[6] == "DROP" {
					dropped[[2]uint16{uint16(atoi(t, r[2])), uint16(atoi(t, r[3]))}]++
				}
			}
			got := udpByPort(t, path)
			_, fs := findingsOf(t, engine.Difs, path)
			checked := 0
			for _, f := range ofKind(fs, engine.KindLoss, 0) {
				if f.Figures["probes"] < 100 {
					continue // too few to hold anything
				}
				port := f.Client.Port()
				c2s := f.Figures["dir_c2s"] == 1
				sent, lost := 0, 0
				for k, n := range got {
					if c2s && k[0] == port || !c2s && k[1] == port {
						sent += n
					}
				}
				for k, n := range dropped {
					if c2s && k[0] == port || !c2s && k[1] == port {
						sent += n
						lost += n
					}
				}
				truth := float64(lost) / float64(sent)
				if truth < f.Figures["rate_low"] || truth > f.Figures["rate_high"] {
					t.Errorf("%s: the impairment dropped %d of %d (%.2f %%), outside the estimate: %s", f.Client, lost, sent, 100*truth, f.Summary)
				}
				checked++
			}
			if checked < 3 {
				t.Errorf("%d loss estimates checked", checked)
			}
		})
	}
}

// gameLog reads a legacy server's game log: per player, its ending stats'
// "frames skipped" and its "too late" inputs, all and those LateFrames or
// more late.
func gameLog(t *testing.T, pattern string) (skipped, late, lateBig map[int]int) {
	t.Helper()
	files, _ := filepath.Glob(pattern)
	if len(files) != 1 {
		t.Skipf("no server game log %s", pattern)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	skipped, late, lateBig = map[int]int{}, map[int]int{}, map[int]int{}
	player := regexp.MustCompile(`Player:(\d+)`)
	skip := regexp.MustCompile(`\|\s+frames skipped\.+\[(\d+)\]`)
	tooLate := regexp.MustCompile(`rx cdat p:(\d+) .*c_sync:\[(-?\d+)\] <-- ERROR! too late`)
	cur := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if m := player.FindStringSubmatch(l); m != nil {
			cur, _ = strconv.Atoi(m[1])
		}
		if m := skip.FindStringSubmatch(l); m != nil && cur >= 0 {
			skipped[cur], _ = strconv.Atoi(m[1])
		}
		if m := tooLate.FindStringSubmatch(l); m != nil {
			p, _ := strconv.Atoi(m[1])
			c, _ := strconv.Atoi(m[2])
			late[p]++
			if -c >= engine.LateFrames {
				lateBig[p]++
			}
		}
	}
	return skipped, late, lateBig
}

// The legacy figures a player would recognise are the game's own: the
// frames skipped of the server's ending stats, the inputs it logged too
// late, and how late.
func TestLegacyFiguresAgainstGameLog(t *testing.T) {
	for _, dir := range []string{"legacy/basic", "legacy/lossy"} {
		t.Run(dir, func(t *testing.T) {
			skipped, late, lateBig := gameLog(t, filepath.Join(realcap.Path(t, dir), "server", "game_log_*.txt"))
			_, fs := findingsOf(t, engine.Difs, realcap.Path(t, filepath.Join(dir, "capture.pcap")))
			seen := 0
			for _, f := range ofKind(fs, engine.KindSlowClient, 0) {
				if _, ok := f.Figures["skipped_share"]; !ok {
					continue
				}
				seen++
				if got, want := int(f.Figures["skipped"]), skipped[f.Player]; got != want || want == 0 {
					t.Errorf("player %d skipped %d frames, the server's stats say %d: %s", f.Player, got, want, f.Summary)
				}
			}
			for _, f := range ofKind(fs, engine.KindLateInputs, 0) {
				seen++
				if got, want := int(f.Figures["late"]), late[f.Player]; got != want {
					t.Errorf("player %d: %d late inputs, the server logged %d", f.Player, got, want)
				}
				// The serr lost carried how late their inputs were: the
				// share of those that arrived stands for them, within 3 %.
				got, want := f.Figures["late_share"]*f.Figures["inputs"], float64(lateBig[f.Player])
				if math.Abs(got-want) > 0.03*want+1 {
					t.Errorf("player %d: %.0f inputs %d frames late or more, the server logged %.0f: %s", f.Player, got, engine.LateFrames, want, f.Summary)
				}
			}
			if seen != 2*len(skipped) {
				t.Errorf("%d slow-client and late-inputs findings for %d players", seen, len(skipped))
			}
		})
	}
}

// On the real captures of games without impairment, nothing is above info.
// (aug-2024/multi is left out: the server really dropped its late joiner
// after one dif, a bug of that build the error there reports.)
func TestCleanCapturesNothingAboveInfo(t *testing.T) {
	for _, c := range []string{
		"legacy/basic/capture.pcap", "legacy/basic/capture.pcapng",
		"modern/basic/basic.pcap", "modern/basic_pcapng/basic.pcapng", "modern/multi/multi.pcap",
		"aug-2024/basic/capture.pcap", "jan-2026/basic/capture.pcap",
		"head-2026-08/basic/capture.pcap", "head-2026-08/multi/capture.pcap",
	} {
		t.Run(c, func(t *testing.T) {
			_, fs := findingsOf(t, engine.Difs, realcap.Path(t, c))
			for _, f := range fs {
				if f.Severity > engine.SeverityInfo {
					t.Errorf("%v %s: %s", f.Severity, f.Kind, f.Summary)
				}
			}
		})
	}
}

// Each fault a player would feel, injected into a synthetic game of each
// era and a newer version, is found for the right client and direction,
// in its window (± 1 s), with its figure, as a warning; the client
// without it has no warning of that kind.
func TestFaultsFoundAsFelt(t *testing.T) {
	newest, err := decode.ParseVersion("2026-07")
	if err != nil {
		t.Fatal(err)
	}
	for _, era := range []decode.Version{decode.Legacy, decode.Modern, newest} {
		t.Run(era.String(), func(t *testing.T) {
			cfg := synth.Config{Era: era, Players: 2, Duration: 40 * time.Second, Seed: 3, LevelChange: -1,
				Faults: synth.Faults{
					Losses: []synth.Loss{
						{Client: 1, Dir: synth.ToClient, Rate: 0.3, From: 10 * time.Second, To: 20 * time.Second},
						{Client: 2, Dir: synth.ToServer, Rate: 0.3, From: 22 * time.Second, To: 32 * time.Second},
					},
					Lates: []synth.Late{{Client: 1, Share: 0.2, Frames: 8, From: 5 * time.Second}},
					Slow:  []synth.Slow{{Client: 2, FPS: 20, From: 34 * time.Second}},
				}}
			path, _, sum := synthGame(t, cfg)
			truths := synth.FaultTruths(cfg, sum)
			_, fs := findingsOf(t, engine.Difs, path)
			for _, f := range ofKind(fs, engine.KindLossBurst, 0) {
				ok := false
				for _, tr := range truths {
					ok = ok || tr.Kind == "loss" && tr.Client == f.Player && (tr.Dir == synth.ToServer) == (f.Figures["dir_c2s"] == 1)
				}
				if !ok {
					t.Errorf("a burst nobody had: %s", f.Summary)
				}
			}
			epoch := synth.Epoch(cfg.Seed)
			for _, tr := range truths {
				switch tr.Kind {
				case "loss":
					c2s := tr.Dir == synth.ToServer
					var hit []engine.Finding
					for _, f := range ofKind(fs, engine.KindLossBurst, 0) {
						if f.Player == tr.Client && (f.Figures["dir_c2s"] == 1) == c2s {
							hit = append(hit, f)
						}
					}
					if len(hit) != 1 {
						t.Fatalf("client %d %s loss window %v–%v s: bursts %v", tr.Client, tr.Dir, tr.From, tr.To, hit)
					}
					f := hit[0]
					// The edges are the first and last probe lost: within 1 s
					// where probes are dense (the difs' pieces, the legacy
					// sdak); where they are sparse (the modern pings and
					// pangs, 2 a second), within 3 times the mean wait for
					// a lost one.
					dense := f.Figures["probes"] >= 50
					tol := max(1, 3/(f.Figures["probes"]/max(f.Figures["seconds"], 1)*tr.Rate))
					from, to := f.Start.Sub(epoch).Seconds(), f.End.Sub(epoch).Seconds()
					if math.Abs(from-tr.From) > tol || math.Abs(to-tr.To) > tol {
						t.Errorf("burst at %.1f–%.1f s, injected %.1f–%.1f s: %s", from, to, tr.From, tr.To, f.Summary)
					}
					if dense && (tr.Rate < f.Figures["rate_low"] || tr.Rate > f.Figures["rate_high"]) || f.Severity != engine.SeverityWarning {
						t.Errorf("burst of rate %v: %v %s", tr.Rate, f.Severity, f.Summary)
					}
				case "late":
					for _, f := range ofKind(fs, engine.KindLateInputs, 0) {
						big := f.Figures["late"]
						if era == decode.Legacy {
							big = f.Figures["late_big"] // the serr says how late: 8 frames is late
						}
						if f.Player == tr.Client {
							if big < 0.9*float64(tr.LateInputs) || big > 1.5*float64(tr.LateInputs) || f.Severity != engine.SeverityWarning {
								t.Errorf("%d inputs made late: %v %s", tr.LateInputs, f.Severity, f.Summary)
							}
						} else if f.Severity != engine.SeverityInfo {
							t.Errorf("late inputs of the other client: %v %s", f.Severity, f.Summary)
						}
					}
				case "slow":
					var hit []engine.Finding
					for _, f := range ofKind(fs, engine.KindSlowClient, 0) {
						if f.Severity == engine.SeverityWarning && f.Player == tr.Client {
							hit = append(hit, f)
						}
					}
					if len(hit) == 0 {
						t.Errorf("slow client %d at %v fps from %v s: no warning", tr.Client, tr.FPS, tr.From)
					}
					for _, f := range hit {
						if era == decode.Legacy {
							if _, ok := f.Figures["skipped_share"]; ok && f.Figures["skipped"] < float64(tr.Skipped) {
								t.Errorf("slow client skipped %d frames: %s", tr.Skipped, f.Summary)
							}
						} else if math.Abs(f.Start.Sub(epoch).Seconds()-tr.From) > 1 || f.Figures["min_fps"] > tr.FPS+2 {
							t.Errorf("slow at %v fps from %v s: %s", tr.FPS, tr.From, f.Summary)
						}
					}
				}
			}
		})
	}
}

// The severity table is the README's: every rule is printed there with
// its kind, figure and threshold.
func TestThresholdsInREADME(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range engine.Thresholds {
		row := regexp.QuoteMeta("| `" + th.Kind + "` | `" + th.Figure + "` | " + engine.ThresholdText(th) + " |")
		if !regexp.MustCompile(row).Match(b) {
			t.Errorf("README has no row %q", "| `"+th.Kind+"` | `"+th.Figure+"` | "+engine.ThresholdText(th)+" |")
		}
	}
}
