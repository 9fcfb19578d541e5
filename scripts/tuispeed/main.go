// Command tuispeed measures G in the terminal UI as a user sees it: it
// starts pmdump tui on a capture in a tmux window of 160×48, presses G
// 0.3 s later and looks at the screen every -step until it shows the
// capture's last game packet, then quits it. For each run it prints when
// the last packet showed, when the status line said "read:" (the fast pass
// over) and the peak RSS of the run; then the medians. With -old it
// measures a second binary too, alternated with the first. It looks with
// one tmux client per look and nothing else, so the looks take little of
// the CPU pmdump runs on. Run it through tui-speed.sh, which builds pmdump.
//
//	tuispeed -bin ./pmdump -old /tmp/pmdump-before -runs 5 hour.pcap
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	bin := flag.String("bin", "pmdump", "the pmdump binary")
	old := flag.String("old", "", "a second pmdump binary to measure, alternated with -bin")
	runs := flag.Int("runs", 5, "runs of each binary")
	step := flag.Duration("step", 100*time.Millisecond, "time between two looks at the screen")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: tuispeed [flags] CAPTURE")
		os.Exit(2)
	}
	capture, err := filepath.Abs(flag.Arg(0))
	check(err)
	last, err := lastPacket(*bin, capture)
	check(err)
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("capture %s, last game packet %d; %d runs, a look every %v; load average %s\n",
		capture, last, *runs, *step, strings.Join(strings.Fields(string(load))[:3], " "))
	bins := []string{*bin}
	if *old != "" {
		bins = append(bins, *old)
	}
	results := make([][]run, len(bins))
	for range *runs {
		for i, b := range bins {
			r, err := measure(b, capture, last, *step)
			check(err)
			fmt.Printf("%s: last packet %.2f s, read: %.2f s, peak RSS %d MB\n", b, r.last.Seconds(), r.read.Seconds(), r.rss>>20)
			results[i] = append(results[i], r)
		}
	}
	for i, b := range bins {
		rs := results[i]
		fmt.Printf("%s: medians: last packet shown after G %.2f s, read: %.2f s, peak RSS %d MB\n", b,
			median(rs, func(r run) float64 { return r.last.Seconds() }), median(rs, func(r run) float64 { return r.read.Seconds() }),
			int64(median(rs, func(r run) float64 { return float64(r.rss) }))>>20)
	}
}

// run is one run's figures: when the last packet and "read:" showed, and
// the peak RSS in bytes.
type run struct {
	last, read time.Duration
	rss        int64
}

// lastPacket is the number of the capture's last game packet.
func lastPacket(bin, capture string) (int, error) {
	cmd := exec.Command(bin, "read", capture)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	var line string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line = sc.Text()
	}
	if err := cmd.Wait(); err != nil {
		return 0, fmt.Errorf("%s read: %w", bin, err)
	}
	f := strings.Fields(line)
	if len(f) == 0 {
		return 0, fmt.Errorf("%s has no game packet", capture)
	}
	return strconv.Atoi(f[0])
}

// measure runs bin's TUI on capture once.
func measure(bin, capture string, last int, step time.Duration) (run, error) {
	session := fmt.Sprintf("tuispeed-%d", os.Getpid())
	rssFile := filepath.Join(os.TempDir(), session+".rss")
	defer os.Remove(rssFile)
	tmux := func(args ...string) ([]byte, error) { return exec.Command("tmux", args...).Output() }
	_, _ = tmux("kill-session", "-t", session)
	t0 := time.Now()
	if _, err := tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "48",
		fmt.Sprintf("/usr/bin/time -f %%M -o %s %s tui %s", rssFile, bin, capture)); err != nil {
		return run{}, fmt.Errorf("tmux: %w", err)
	}
	defer func() { _, _ = tmux("kill-session", "-t", session) }()
	time.Sleep(300 * time.Millisecond)
	if _, err := tmux("send-keys", "-t", session, "G"); err != nil {
		return run{}, err
	}
	lastRow := regexp.MustCompile(fmt.Sprintf(`(?m)^ *%d `, last))
	var r run
	for r.last == 0 || r.read == 0 {
		time.Sleep(step)
		screen, err := tmux("capture-pane", "-p", "-t", session)
		if err != nil {
			return run{}, fmt.Errorf("the TUI ended early: %w", err)
		}
		now := time.Since(t0)
		if r.last == 0 && lastRow.Match(screen) {
			r.last = now
		}
		if r.read == 0 && bytes.Contains(screen, []byte("read:")) {
			r.read = now
		}
		if now > 2*time.Minute {
			return run{}, fmt.Errorf("no last packet after %v", now)
		}
	}
	if _, err := tmux("send-keys", "-t", session, "q"); err != nil {
		return run{}, err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := tmux("has-session", "-t", session); err != nil {
			break
		}
	}
	b, err := os.ReadFile(rssFile)
	if err != nil {
		return run{}, fmt.Errorf("peak RSS: %w", err)
	}
	kb, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return run{}, fmt.Errorf("peak RSS: %w", err)
	}
	r.rss = kb << 10
	return r, nil
}

func median(rs []run, f func(run) float64) float64 {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "tuispeed:", err)
		os.Exit(1)
	}
}
