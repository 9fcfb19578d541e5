// Package sender sends a sequence of UDP datagrams with paced timing, the way
// tcpreplay does, but with every send time anchored to the start of the run:
// datagram i is due at start + offset_i ÷ speed (or start + i ÷ pps), never at
// the previous send + a gap, so errors do not accumulate over a long run.
//
// To hit a deadline the sender sleeps until shortly before it and spins for
// the rest. Errors the network reports on a connected UDP socket (ICMP port
// unreachable surfaces as ECONNREFUSED, no route as EHOSTUNREACH or
// ENETUNREACH) are counted and the run goes on.
package sender

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// Datagram is one payload to send and when, relative to the first datagram.
type Datagram struct {
	Offset  time.Duration // time since the first datagram of the sequence
	Payload []byte
}

// Options choose the pacing of a run.
type Options struct {
	// Speed multiplies the original rate: offsets are divided by it.
	// 0 means 1.
	Speed float64
	// PPS, when not 0, sends at this many datagrams per second instead of
	// the original timing.
	PPS float64
	// ASAP sends every datagram as fast as the socket takes them.
	ASAP bool
	// Loop is how many times the sequence is sent; 0 means once.
	// Loops follow each other without a pause.
	Loop int
	// Forever sends the sequence again and again until the context ends.
	Forever bool
	// Spin is how long before a deadline the sender stops sleeping and
	// spins. 0 means DefaultSpin.
	Spin time.Duration
	// Progress, when set, is called after every datagram with the number
	// sent so far.
	Progress func(sent int)
}

// DefaultSpin is how long before a deadline the sender starts to spin: a
// little more than the timer slack of an idle Linux machine.
const DefaultSpin = 1 * time.Millisecond

// Stats describe a finished run.
type Stats struct {
	Datagrams int           // datagrams handed to the socket without error
	Bytes     int           // their payload bytes
	Elapsed   time.Duration // from the start of the run to the last send
	Refused   int           // ICMP port unreachable reports (the datagram is sent again once)
	NoRoute   int           // sends that failed for want of a route or host
	Other     int           // sends that failed otherwise
	LastErr   error         // the last send error, if any
	// Errors are the send-time errors (actual − deadline) of every
	// paced datagram, sorted; empty with ASAP.
	Errors []time.Duration
}

// Rate is the achieved rate in datagrams per second.
func (s *Stats) Rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Datagrams) / s.Elapsed.Seconds()
}

// Quantile returns the q-quantile (0..1) of the send-time errors, 0 when
// there are none.
func (s *Stats) Quantile(q float64) time.Duration {
	if len(s.Errors) == 0 {
		return 0
	}
	i := int(q * float64(len(s.Errors)-1))
	return s.Errors[i]
}

// Max is the largest send-time error.
func (s *Stats) Max() time.Duration {
	if len(s.Errors) == 0 {
		return 0
	}
	return s.Errors[len(s.Errors)-1]
}

// Failed is the number of sends that failed.
func (s *Stats) Failed() int { return s.Refused + s.NoRoute + s.Other }

// Send sends ds on conn, a connected UDP socket, paced as opt says, until
// every loop is done or ctx ends. It returns an error only for a bad
// configuration or a socket that cannot send at all; network errors are
// counted in the Stats.
func Send(ctx context.Context, conn net.Conn, ds []Datagram, opt Options) (Stats, error) {
	var st Stats
	if opt.Speed < 0 || opt.PPS < 0 || opt.Loop < 0 {
		return st, errors.New("speed, pps and loop must not be negative")
	}
	if opt.Speed == 0 {
		opt.Speed = 1
	}
	if opt.Spin == 0 {
		opt.Spin = DefaultSpin
	}
	if opt.Loop == 0 {
		opt.Loop = 1
	}
	if len(ds) == 0 {
		return st, nil
	}
	// span is the length of one loop, so loop k starts at k × span.
	var span time.Duration
	switch {
	case opt.ASAP:
	case opt.PPS > 0:
		span = time.Duration(float64(len(ds)) / opt.PPS * float64(time.Second))
	default:
		last := ds[len(ds)-1].Offset
		span = time.Duration(float64(last)/opt.Speed) + time.Duration(float64(last)/opt.Speed/float64(len(ds)))
	}
	if !opt.ASAP {
		n := len(ds) * opt.Loop
		if opt.Forever {
			n = 1 << 22
		}
		st.Errors = make([]time.Duration, 0, min(n, 1<<22))
	}
	done := ctx.Done()
	start := time.Now()
	if bw := batcher(conn); opt.ASAP && bw != nil {
		err := st.sendBatches(ctx, bw, ds, opt)
		st.finish(start)
		return st, err
	}
	sent := 0
	for loop := 0; opt.Forever || loop < opt.Loop; loop++ {
		base := time.Duration(loop) * span
		for i := range ds {
			if sent&63 == 0 {
				select {
				case <-done:
					st.finish(start)
					return st, nil
				default:
				}
			}
			var at time.Duration
			if !opt.ASAP {
				if opt.PPS > 0 {
					at = base + time.Duration(float64(i)/opt.PPS*float64(time.Second))
				} else {
					at = base + time.Duration(float64(ds[i].Offset)/opt.Speed)
				}
				if err := waitUntil(ctx, start, at, opt.Spin); err != nil {
					st.finish(start)
					return st, nil
				}
				if len(st.Errors) < cap(st.Errors) {
					st.Errors = append(st.Errors, time.Since(start)-at)
				}
			}
			_, err := conn.Write(ds[i].Payload)
			if err != nil && errors.Is(err, syscall.ECONNREFUSED) {
				// The error was an ICMP message about an earlier
				// datagram, reported instead of sending this one.
				st.count(err)
				_, err = conn.Write(ds[i].Payload)
			}
			sent++
			if err != nil {
				if !st.count(err) {
					st.finish(start)
					return st, fmt.Errorf("send datagram %d: %w", i+1, err)
				}
			} else {
				st.Datagrams++
				st.Bytes += len(ds[i].Payload)
			}
			if opt.Progress != nil {
				opt.Progress(sent)
			}
		}
	}
	st.finish(start)
	return st, nil
}

// batchWriter sends many datagrams with one system call (sendmmsg).
type batchWriter interface {
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// batcher returns a batch writer for a UDP socket, nil for other conns.
func batcher(conn net.Conn) batchWriter {
	uc, ok := conn.(*net.UDPConn)
	if !ok {
		return nil
	}
	if ra, ok := uc.RemoteAddr().(*net.UDPAddr); ok && ra.IP.To4() == nil {
		return ipv6.NewPacketConn(uc)
	}
	return ipv4.NewPacketConn(uc)
}

// batchSize is how many datagrams go in one sendmmsg.
const batchSize = 512

// sendBatches sends every loop of ds as fast as the socket takes them, in
// batches.
func (st *Stats) sendBatches(ctx context.Context, bw batchWriter, ds []Datagram, opt Options) error {
	ms := make([]ipv4.Message, batchSize)
	for i := range ms {
		ms[i].Buffers = make([][]byte, 1)
	}
	sent := 0
	for loop := 0; opt.Forever || loop < opt.Loop; loop++ {
		for i := 0; i < len(ds); {
			if ctx.Err() != nil {
				return nil
			}
			n := min(batchSize, len(ds)-i)
			for k := range n {
				ms[k].Buffers[0] = ds[i+k].Payload
			}
			w, err := bw.WriteBatch(ms[:n], 0)
			for k := range max(w, 0) {
				st.Datagrams++
				st.Bytes += len(ds[i+k].Payload)
			}
			i += max(w, 0)
			sent += max(w, 0)
			if err != nil {
				if !st.count(err) {
					return fmt.Errorf("send datagram %d: %w", i+1, err)
				}
				if !errors.Is(err, syscall.ECONNREFUSED) {
					i++ // that one failed; an ICMP report is for an earlier one
					sent++
				}
			}
			if opt.Progress != nil {
				opt.Progress(sent)
			}
		}
	}
	return nil
}

func (st *Stats) finish(start time.Time) {
	st.Elapsed = time.Since(start)
	slices.Sort(st.Errors)
}

// count files a send error and reports whether the run can go on.
func (st *Stats) count(err error) bool {
	st.LastErr = err
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		st.Refused++
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, syscall.EHOSTDOWN), errors.Is(err, syscall.ENETDOWN):
		st.NoRoute++
	case errors.Is(err, net.ErrClosed), errors.Is(err, syscall.EBADF):
		return false
	default:
		st.Other++
	}
	return true
}

// waitUntil returns when start + at has come: it sleeps until spin before
// and spins for the rest. It returns ctx's error if ctx ends first.
func waitUntil(ctx context.Context, start time.Time, at, spin time.Duration) error {
	for {
		left := at - time.Since(start)
		if left <= 0 {
			return nil
		}
		if left > spin {
			d := left - spin
			if d > 50*time.Millisecond {
				// Long waits in slices, so a cancelled run ends soon.
				d = 50 * time.Millisecond
			}
			t := time.NewTimer(d)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
			continue
		}
		for time.Since(start) < at {
		}
		return nil
	}
}
