package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// pipeline runs captures through source → session, file after file, as one
// capture: frame numbers continue from one file to the next.
type pipeline struct {
	inputs  []string
	tracker *session.Tracker
	stderr  io.Writer
	idle    func() // called before waiting for a live input

	frames     int // frames read over all inputs
	counters   source.Counters
	unreadable []error
	first      time.Time // earliest and latest time stamps
	last       time.Time
	formats    []string
	warnings   []string // problems with the inputs, also printed on stderr
}

// warnf reports a problem with the inputs on stderr and keeps it for the
// report.
func (p *pipeline) warnf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	p.warnings = append(p.warnings, msg)
	fmt.Fprintln(p.stderr, "pmdump: warning:", msg)
}

func newPipeline(inputs []string, era decode.Era, stderr io.Writer) *pipeline {
	p := &pipeline{inputs: inputs, tracker: session.NewTracker(era), stderr: stderr}
	p.counters.LinkTypes = map[string]int{}
	return p
}

// openInput opens a capture file, "-" (stdin) or a bundled sample.
func openInput(name string) (*source.Reader, error) {
	if s, ok := strings.CutPrefix(name, "sample:"); ok {
		data, err := captures.Sample(s)
		if err != nil {
			return nil, err
		}
		return source.NewReader(bytes.NewReader(data), name)
	}
	return source.Open(name)
}

var errStop = errors.New("stop")

// run feeds every game record (game, malformed and unknown packets; not
// non-game UDP) to fn. fn returns errStop to end the run early. Problems
// with an input are reported on stderr and the run goes on with the next.
func (p *pipeline) run(fn func(r *session.Record) error) error {
	for _, in := range p.inputs {
		rd, err := openInput(in)
		if err != nil {
			err = fmt.Errorf("cannot read %s: %w", in, err)
			fmt.Fprintln(p.stderr, "pmdump:", err)
			p.unreadable = append(p.unreadable, err)
			continue
		}
		p.formats = append(p.formats, rd.Format())
		rd.SetFrameBase(p.frames)
		pf := source.Prefetch(rd)
		pf.Idle = p.idle
		stop := false
		for {
			d, err := pf.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				p.warnf("%v", err)
				break
			}
			if p.first.IsZero() || d.TS.Before(p.first) {
				p.first = d.TS
			}
			if d.TS.After(p.last) {
				p.last = d.TS
			}
			r := p.tracker.Process(d)
			if r.Kind == session.NonGame {
				continue
			}
			if err := fn(r); err != nil {
				if err == errStop {
					stop = true
					break
				}
				pf.Close()
				rd.Close()
				return err
			}
		}
		pf.Close()
		c := pf.Counters()
		p.frames = c.Frames
		p.addCounters(c)
		rd.Close()
		if stop {
			break
		}
	}
	if len(p.unreadable) > 0 {
		return inputError{fmt.Errorf("%d of %d inputs could not be read", len(p.unreadable), len(p.inputs))}
	}
	return nil
}

func (p *pipeline) addCounters(c source.Counters) {
	t := &p.counters
	t.Frames = c.Frames
	t.NonUDP += c.NonUDP
	t.Fragments += c.Fragments
	t.Reassembled += c.Reassembled
	t.BadFrames += c.BadFrames
	t.Truncated += c.Truncated
	t.Datagrams += c.Datagrams
	for k, v := range c.LinkTypes {
		t.LinkTypes[k] += v
	}
}
