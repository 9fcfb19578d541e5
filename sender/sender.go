// Package sender replays the datagrams of recorded conversations over UDP,
// paced the way tcpreplay does, but with every send time anchored to the
// start of the run: datagram i is due at start + offset_i ÷ speed (or
// start + i ÷ pps), never at the previous send + a gap, so errors do not
// accumulate over a long run.
//
// Each recorded conversation is sent from its own sockets, so a receiver
// sees the conversations apart, with their roles kept (see Fleet). The
// datagrams come from a Pass, a function that streams one pass over the
// recording, so a run holds only the datagram being sent (a batch of them
// when sending as fast as possible), never the whole recording.
//
// To hit a deadline the sender sleeps until shortly before it and spins for
// the rest. Errors the network reports (ICMP port unreachable, host or
// network unreachable) are counted, in every mode, from each socket's error
// queue; the run goes on.
//
// `pmdump replay` (sending a recording again over the network) is built on
// this package. It is not package replay, which rebuilds the game states
// from the recorded difs and sends nothing.
package sender

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"syscall"
	"time"
)

// Datagram is one payload to send, when, and by which side of which
// conversation.
type Datagram struct {
	Offset  time.Duration // time since the first datagram of the pass
	Payload []byte        // used only during the call that receives it
	Conv    int           // the recorded conversation: each has its own sockets
	Server  bool          // sent by the server (s→c); otherwise by the client (c→s)
	Listen  bool          // c→s to the server's listening port (the handshake); otherwise to the conversation's server port
}

// Pass streams one pass over the recording: it calls yield with every
// datagram in order and stops early when yield returns false. It is called
// again for every loop.
type Pass func(ctx context.Context, yield func(Datagram) bool) error

// Options choose the pacing of a run.
type Options struct {
	// Speed multiplies the original rate: offsets are divided by it.
	// 0 means 1.
	Speed float64
	// PPS, when not 0, sends at this many datagrams per second instead of
	// the original timing.
	PPS float64
	// ASAP sends every datagram as fast as the sockets take them.
	ASAP bool
	// Loop is how many passes are sent; 0 means once. Each pass starts
	// one mean gap after the previous pass's last datagram.
	Loop int
	// Forever sends pass after pass until the context ends.
	Forever bool
	// Limit, when not 0, ends the run after that many datagrams.
	Limit int
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

// maxErrors bounds the send-time errors kept for the quantiles.
const maxErrors = 1 << 22

// Stats describe a finished run.
type Stats struct {
	Datagrams int           // datagrams handed to a socket without error
	Bytes     int           // their payload bytes
	Elapsed   time.Duration // from the start of the run to the last send
	Refused   int           // ICMP port unreachable reports
	NoRoute   int           // ICMP host or network unreachable reports, and sends that failed for want of a route
	Other     int           // other errors the network reported or sends that failed otherwise
	LastErr   error         // the last error, if any
	Skipped   int           // s→c datagrams not sent: the server's address is not on this machine
	Convs     int           // conversations that were given sockets
	// Errors are the send-time errors (actual − deadline) of every
	// paced datagram (up to about four million), sorted; empty with ASAP.
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

// Failed is the number of errors the network reported and sends that
// failed.
func (s *Stats) Failed() int { return s.Refused + s.NoRoute + s.Other }

// errStop ends a pass early from inside yield.
var errStop = errors.New("stop")

// Run sends the passes of pass through f, paced as opt says, until every
// loop is done, the limit is reached or ctx ends. It returns an error for
// a bad configuration, a socket that cannot send at all, or the pass's own
// error; network errors are counted in the Stats.
func Run(ctx context.Context, f *Fleet, pass Pass, opt Options) (st Stats, err error) {
	if opt.Speed < 0 || opt.PPS < 0 || opt.Loop < 0 || opt.Limit < 0 {
		return st, errors.New("speed, pps, loop and limit must not be negative")
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
	r := &run{ctx: ctx, f: f, opt: opt, st: &st, start: time.Now()}
	if opt.ASAP {
		r.batch = newBatch()
	}
	defer func() {
		f.drain(&st)
		st.Convs = f.convs()
		st.Elapsed = r.lastSend.Sub(r.start)
		if r.lastSend.IsZero() {
			st.Elapsed = 0
		}
		slices.Sort(st.Errors)
	}()
	for loop := 0; opt.Forever || loop < opt.Loop; loop++ {
		r.n, r.last = 0, 0
		err = pass(ctx, r.yield)
		if r.batch != nil && r.err == nil {
			r.err = r.flush()
		}
		if r.err != nil && r.err != errStop {
			return st, r.err
		}
		if err != nil && !errors.Is(err, context.Canceled) {
			return st, err
		}
		err = nil
		if r.err == errStop || ctx.Err() != nil || r.n == 0 {
			return st, nil
		}
		// The next pass starts one mean gap after this one's last datagram.
		switch {
		case opt.ASAP:
		case opt.PPS > 0:
			r.base += time.Duration(float64(r.n) / opt.PPS * float64(time.Second))
		default:
			span := time.Duration(float64(r.last) / opt.Speed)
			r.base += span + span/time.Duration(r.n)
		}
	}
	return st, nil
}

// run is the state of one Run.
type run struct {
	ctx      context.Context
	f        *Fleet
	opt      Options
	st       *Stats
	start    time.Time
	lastSend time.Time
	base     time.Duration // start of the current pass since the start of the run
	n        int           // datagrams of the current pass
	last     time.Duration // offset of the current pass's latest datagram
	sent     int           // datagrams sent (or failed) in the run
	batch    *batch
	err      error
}

// yield sends one datagram; it returns false to end the pass.
func (r *run) yield(d Datagram) bool {
	if r.err != nil {
		return false
	}
	if r.sent&63 == 0 && r.sent > 0 {
		r.f.drain(r.st)
	}
	r.n++
	r.last = max(r.last, d.Offset)
	conn, to, ok := r.f.route(d)
	if !ok {
		r.st.Skipped++
		return true
	}
	if r.batch != nil {
		if !r.batch.add(conn, to, d.Payload) {
			if r.err = r.flush(); r.err != nil {
				return false
			}
			r.batch.add(conn, to, d.Payload)
		}
		return !r.limited()
	}
	var at time.Duration
	if r.opt.PPS > 0 {
		at = r.base + time.Duration(float64(r.n-1)/r.opt.PPS*float64(time.Second))
	} else {
		at = r.base + time.Duration(float64(d.Offset)/r.opt.Speed)
	}
	if err := waitUntil(r.ctx.Done(), r.start, at, r.opt.Spin); err != nil {
		return false
	}
	if r.st.Errors == nil {
		r.st.Errors = make([]time.Duration, 0, 1024)
	}
	if len(r.st.Errors) < maxErrors {
		r.st.Errors = append(r.st.Errors, time.Since(r.start)-at)
	}
	err := send(conn, to, d.Payload)
	r.lastSend = time.Now()
	r.sent++
	if err != nil {
		if !r.st.count(err) {
			r.err = fmt.Errorf("send datagram %d: %w", r.sent, err)
			return false
		}
	} else {
		r.st.Datagrams++
		r.st.Bytes += len(d.Payload)
	}
	if r.opt.Progress != nil {
		r.opt.Progress(r.sent)
	}
	return !r.limited()
}

// limited reports whether the limit is reached, and ends the run if so.
func (r *run) limited() bool {
	if r.opt.Limit > 0 && r.sent+r.batchLen() >= r.opt.Limit {
		if r.batch != nil {
			r.err = r.flush()
		}
		if r.err == nil {
			r.err = errStop
		}
		return true
	}
	return false
}

func (r *run) batchLen() int {
	if r.batch == nil {
		return 0
	}
	return r.batch.n
}

// flush sends the batch.
func (r *run) flush() error {
	err := r.batch.send(r.st, &r.sent, r.opt.Progress)
	if r.batch.sentAny {
		r.lastSend = time.Now()
		r.batch.sentAny = false
	}
	return err
}

// send sends one datagram. A refusal given instead of sending is the ICMP
// report of an earlier datagram (queued, and counted, from the error
// queue): the datagram goes again.
func send(conn *net.UDPConn, to *net.UDPAddr, p []byte) error {
	for try := 0; ; try++ {
		_, err := conn.WriteToUDP(p, to)
		if err == nil || !errors.Is(err, syscall.ECONNREFUSED) || try == 3 {
			return err
		}
	}
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
// and spins for the rest. It returns an error if done closes first.
func waitUntil(done <-chan struct{}, start time.Time, at, spin time.Duration) error {
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
			case <-done:
				t.Stop()
				return context.Canceled
			case <-t.C:
			}
			continue
		}
		for time.Since(start) < at {
		}
		return nil
	}
}
