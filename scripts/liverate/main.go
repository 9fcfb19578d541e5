//go:build linux

// Command liverate measures the live capture source on a loopback device:
// one process sends UDP datagrams of a synthetic game at a given rate, the
// other captures them with source.OpenLive, decodes them with the session
// tracker and reports what it captured, what the kernel dropped, the CPU
// it used and its memory. Run it through live-rate.sh, which makes a
// network namespace for it (root needed).
//
//	liverate sniff -d 12s
//	liverate send -rate 200000 -d 10s
package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
	"github.com/pmdump/pmdump/synth"
)

type collect struct{ payloads [][]byte }

func (c *collect) WriteDatagram(_ time.Time, _, _ netip.AddrPort, p []byte) error {
	c.payloads = append(c.payloads, append([]byte(nil), p...))
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: liverate sniff|send [flags]")
		os.Exit(1)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	d := fs.Duration("d", 10*time.Second, "how long")
	rate := fs.Int("rate", 200000, "datagrams per second (send)")
	prof := fs.String("cpuprofile", "", "write a CPU profile (sniff)")
	noDecode := fs.Bool("no-decode", false, "capture only, do not decode (sniff)")
	fs.Parse(os.Args[2:])
	if *prof != "" {
		f, err := os.Create(*prof)
		if err == nil {
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
	}
	var err error
	switch os.Args[1] {
	case "sniff":
		err = sniff(*d, !*noDecode)
	case "send":
		err = send(*rate, *d)
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "liverate:", err)
		os.Exit(2)
	}
}

// send sends the datagrams of a synthetic game, cycled, from a client port
// to a server port on 127.0.0.1, rate per second, in 1 ms bursts. The
// server socket is never read: once its buffer is full the kernel drops
// what comes (after the capture saw it), which costs less than reading.
func send(rate int, d time.Duration) error {
	var c collect
	if _, err := synth.Generate(synth.Config{Era: decode.Modern, Players: 7, Duration: 20 * time.Second, Seed: 3}, &c, nil); err != nil {
		return err
	}
	srv, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 24785})
	if err != nil {
		return err
	}
	defer srv.Close()
	cli, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 24786})
	if err != nil {
		return err
	}
	to := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 24785}
	pc := ipv4.NewPacketConn(cli)
	msgs := make([]ipv4.Message, 64)
	start := time.Now()
	sent, i := 0, 0
	for time.Since(start) < d {
		due := int(time.Since(start).Seconds() * float64(rate))
		for sent < due {
			n := min(len(msgs), due-sent)
			for k := range msgs[:n] {
				msgs[k] = ipv4.Message{Buffers: [][]byte{c.payloads[i]}, Addr: to}
				if i++; i == len(c.payloads) {
					i = 0
				}
			}
			m, err := pc.WriteBatch(msgs[:n], 0) // sendmmsg: one system call for many
			if err != nil {
				return err
			}
			sent += m
		}
		time.Sleep(time.Millisecond)
	}
	el := time.Since(start)
	fmt.Printf("sent %d datagrams in %v: %.0f/s\n", sent, el.Round(time.Millisecond), float64(sent)/el.Seconds())
	return nil
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func heap() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// sniff captures lo for d and reports.
func sniff(d time.Duration, decodeToo bool) error {
	live, err := source.OpenLive(source.LiveOptions{Interfaces: []string{"lo"}})
	if err != nil {
		return err
	}
	time.AfterFunc(d, func() { live.Close() })
	r := source.NewFrameReader(live, "lo")
	tr := session.NewTracker(decode.VersionUnknown)
	start, cpu0 := time.Now(), cpu()
	var n, game int
	var heap1, heapMax uint64
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var latency, maxLatency time.Duration
	for {
		dg, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if l := time.Since(dg.TS); l > maxLatency {
			maxLatency = l
		}
		latency += time.Since(dg.TS)
		if decodeToo {
			if rec := tr.Process(dg); rec != nil && rec.Kind == session.Game {
				game++
			}
		}
		if n++; n == 10000 {
			heap1 = heap()
		}
		select {
		case <-tick.C:
			if h := heap(); h > heapMax && time.Since(start) > 2*time.Second {
				heapMax = h
			}
		default:
		}
	}
	el, used := time.Since(start), cpu()-cpu0
	c := r.Counters()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Printf("captured %d datagrams (%d game packets) in %v: %.0f/s\n", n, game, el.Round(time.Millisecond), float64(n)/el.Seconds())
	fmt.Printf("kernel received %d, dropped %d\n", c.KernelReceived, c.KernelDropped)
	fmt.Printf("CPU %v (user %v, system %v): %.1f%% of one core\n", used.Round(time.Millisecond),
		time.Duration(ru.Utime.Nano()).Round(time.Millisecond), time.Duration(ru.Stime.Nano()).Round(time.Millisecond), 100*used.Seconds()/el.Seconds())
	if n > 0 {
		fmt.Printf("latency capture → decoded: mean %v, worst %v\n", (latency / time.Duration(n)).Round(time.Microsecond), maxLatency.Round(time.Microsecond))
	}
	fmt.Printf("heap in use after 10k datagrams %.1f MB, most after 2 s %.1f MB, at the end %.1f MB; max RSS %.1f MB\n",
		float64(heap1)/1e6, float64(heapMax)/1e6, float64(heap())/1e6, float64(ru.Maxrss)/1e3)
	return nil
}
