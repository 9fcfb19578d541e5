package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"time"

	"github.com/pmdump/pmdump/source"
)

// ErrUnreadable is wrapped by Run's error when inputs could not be read at
// all.
var ErrUnreadable = errors.New("inputs could not be read")

// Run reads capture files (or "-" for standard input, or "sample:NAME" for a
// bundled sample) one after the other as one capture, frames numbered on,
// and then finishes the analysis (see Finish). Problems with an input are
// reported as warnings and the run goes on with the next; an input that
// cannot be opened at all, or of which nothing could be read, makes Run
// return an error wrapping ErrUnreadable once the others are read; one cut
// short or stopped at a record that cannot be read is in Stats.Damaged.
func (e *Engine) Run(ctx context.Context, inputs ...string) error {
	var unreadable []error
	for _, name := range inputs {
		in, err := OpenInput(name)
		if err != nil {
			err = fmt.Errorf("cannot read %s: %w", name, err)
			unreadable = append(unreadable, err)
			e.mu.Lock()
			e.cap.unreadable = append(e.cap.unreadable, err.Error())
			e.mu.Unlock()
			if e.wants(WarningEvents) {
				e.emitNow(WarningEvent{Message: err.Error(), Unreadable: true})
			}
			continue
		}
		e.mu.Lock()
		e.cap.inputs = append(e.cap.inputs, name)
		e.cap.formats = append(e.cap.formats, in.Reader.Format())
		in.Reader.SetFrameBase(e.cap.counters.Frames)
		e.mu.Unlock()
		e.input = 0
		if e.index != nil && in.Path != "" {
			if rr, ok := source.OpenRereader(in.Path, in.Reader, in.Stat); ok {
				e.input = e.index.addInput(rr)
			}
		}
		e.refInput = 0
		if e.bh != nil {
			// The rebuild waits while a file is read (until Finish); it
			// runs beside a stream, which may be a live capture piped in.
			e.bh.hold(in.Path != "")
		}
		if e.bh != nil && in.Path != "" && in.Reader.Format() == "pcap" && !in.Reader.Compressed() {
			// The rebuild reads the difs' pieces back from the file:
			// the backlog keeps where they are, not their bytes.
			e.refInput = e.bh.files.add(in.Path, in.Stat)
			if e.refInput > 0 {
				// Nor does the reassembler keep them.
				e.asm.RereadRefs(e.rereadPiece)
			}
		}
		var pf, staged *source.Prefetcher
		if e.twoStages(in) {
			pf = source.PrefetchPrepared(in.Reader, e.front)
			staged = pf
		} else {
			pf = source.Prefetch(in.Reader)
		}
		pf.Idle = e.cfg.Idle
		err = e.runSource(ctx, pf, in, staged)
		pf.Close() // the first stage (front) reads e.input
		e.input, e.refInput = 0, 0
		in.Close()
		if err != nil {
			return err
		}
		if e.stop.Load() {
			break
		}
	}
	e.Finish()
	if unreadable = append(unreadable, e.takeEmptyInputs()...); len(unreadable) > 0 {
		return unreadableError(unreadable, len(inputs))
	}
	return nil
}

// RunSource reads a source (a live interface, say) until it ends, ctx is
// done or Stop is called. It does not finish the analysis: call Tick while
// the source is quiet and Finish at the end.
func (e *Engine) RunSource(ctx context.Context, src Source) error {
	return e.runSource(ctx, src, nil, nil)
}

// runSource reads src; staged is src when it runs the first stage of the
// fast pass (see front), nil when the tracker is fed here.
func (e *Engine) runSource(ctx context.Context, src Source, in *Input, staged *source.Prefetcher) error {
	e.mu.Lock()
	base := e.cap.counters
	e.cap.baseLinkTypes = maps.Clone(e.cap.linkTypes)
	e.mu.Unlock()
	lastProgress := time.Now()
	progress := func(done bool) {
		if in == nil || !e.wants(ProgressEvents) {
			return
		}
		e.emit(ProgressEvent{Input: in.Name, Read: in.Read(), Total: in.Size, Frames: e.cap.counters.Frames, Done: done})
	}
	// The lock is held over runs of up to lockRun datagrams the source
	// has at hand, not taken for each: snapshots wait a few microseconds
	// at most, and a large capture saves a lock per packet.
	ready, _ := src.(interface{ Ready() bool })
	locked := false
	unlock := func() {
		if locked {
			locked = false
			e.unlock()
		}
	}
	defer unlock()
	for i := 0; ; i++ {
		if i&255 == 0 {
			unlock()
			if err := ctx.Err(); err != nil {
				e.mu.Lock()
				e.addCounters(base, src.Counters())
				e.mu.Unlock()
				return err
			}
			if time.Since(lastProgress) > 100*time.Millisecond { // the counters (a live source's kernel drops) and the progress
				lastProgress = time.Now()
				e.mu.Lock()
				e.addCounters(base, src.Counters())
				progress(false)
				e.unlock()
			}
		}
		if locked && (i%lockRun == 0 || ready == nil || !ready.Ready()) {
			unlock() // the source may wait for its next datagram
		}
		d, err := src.Next()
		if err != nil {
			unlock()
			e.mu.Lock()
			c := src.Counters()
			e.addCounters(base, c)
			for _, w := range c.Warnings() { // unsupported link types, fragments given up, kernel drops
				e.warnf("%s", w)
			}
			if err != io.EOF && !errors.Is(err, context.Canceled) {
				e.inputEnded(in, c.Frames-base.Frames, err)
			}
			progress(true)
			e.unlock()
			if errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		}
		if !locked {
			e.mu.Lock()
			locked = true
		}
		if staged != nil {
			aux, j := staged.Prepared()
			fb := aux.(*frontBatch)
			e.analyse(&fb.recs[j], d, fb.idx[j])
		} else {
			e.feed(d)
		}
		if len(e.pending) > 0 {
			unlock() // the events are delivered without the lock, before the next datagram
		}
		if e.stop.Load() {
			if !locked {
				e.mu.Lock()
				locked = true
			}
			e.addCounters(base, src.Counters())
			return nil
		}
	}
}

// Tick advances the analysis to time now without a packet: difs that have
// been quiet longer than the reassembler's limit are abandoned, states that
// wait for a base that has not come are given up, and every state rebuilt
// so far is emitted. A live capture calls it while the network is quiet.
func (e *Engine) Tick(now time.Time) {
	e.mu.Lock()
	defer e.unlock()
	if e.finished {
		return
	}
	if e.asm != nil {
		e.asm.Tick(now)
	}
	if e.bh != nil {
		e.bh.queue(rebuildOp{kind: opFlush, water: e.asm.OldestPendingN()})
	} else if e.builder != nil {
		e.builder.Flush()
		if e.timeline != nil {
			e.applyAcks(e.builder.Emitted())
		}
		if e.order.on {
			e.releaseStates(false)
		}
	}
}

// Finish ends the analysis at the end of the capture: unfinished difs end
// as incomplete, every state is rebuilt and emitted. The engine takes no
// more datagrams after it; its snapshots, index and timeline stay usable
// until Close.
func (e *Engine) Finish() {
	e.mu.Lock()
	defer e.unlock()
	if e.finished {
		return
	}
	if e.asm != nil {
		e.asm.Flush()
	}
	if e.bh != nil {
		e.bh.q.close() // the rebuild goes on to the end of the backlog
		if e.timeline != nil {
			for l, n := range e.bh.queued { // each dif queued makes a state
				e.timeline.Expect(l, n)
			}
		}
		e.bh.hold(false)
		e.gate.SetLimit(runtime.GOMAXPROCS(0))
	} else if e.builder != nil {
		e.builder.Close()
		if e.timeline != nil {
			e.applyAcks(int(^uint(0) >> 1))
		}
		if e.order.on {
			e.releaseStates(true)
		}
	}
	if e.badStdf > 0 {
		if e.cap.counters.Truncated > 0 {
			e.warnf("%d stdf pieces are malformed or cut by the capture's snap length; the difs they belong to cannot be rebuilt (capture with -s 0)", e.badStdf)
		} else {
			e.warnf("%d stdf pieces are malformed; the difs they belong to cannot be rebuilt", e.badStdf)
		}
	}
	if e.finds != nil {
		e.finds.finish(e, e.bh == nil)
	}
	e.finished = true
}

// Close finishes the analysis if it was not, waits for every goroutine the
// engine started and releases its temporary files.
func (e *Engine) Close() error {
	e.Finish()
	if e.bh != nil {
		e.bh.aborted.Store(true)
		e.bh.q.abort()
		<-e.bh.done
		e.bh.files.close()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var err error
	if e.timeline != nil {
		err = e.timeline.Close()
	}
	if e.index != nil {
		err = errors.Join(err, e.index.close())
	}
	return err
}

// ErrInternal is wrapped by Err's error: the engine itself failed (its
// temporary files could not be written), not the input.
var ErrInternal = errors.New("pmdump could not keep its index")

// Err returns the first failure of the engine itself (a temporary file
// that could not be written: the disk is full, say), nil if none.
func (e *Engine) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cap.timelineErr != nil {
		return fmt.Errorf("%w: %w", ErrInternal, e.cap.timelineErr)
	}
	if e.index != nil {
		if err := e.index.err(); err != nil {
			return fmt.Errorf("%w: %w", ErrInternal, err)
		}
	}
	return nil
}

func (e *Engine) addCounters(base, c source.Counters) {
	t := &e.cap.counters
	t.Frames = c.Frames
	t.NonUDP = base.NonUDP + c.NonUDP
	t.Fragments = base.Fragments + c.Fragments
	t.Reassembled = base.Reassembled + c.Reassembled
	t.BadFrames = base.BadFrames + c.BadFrames
	t.Truncated = base.Truncated + c.Truncated
	t.Datagrams = base.Datagrams + c.Datagrams
	t.FragmentsDropped = base.FragmentsDropped + c.FragmentsDropped
	t.Unsupported = base.Unsupported + c.Unsupported
	t.KernelReceived = base.KernelReceived + c.KernelReceived
	t.KernelDropped = base.KernelDropped + c.KernelDropped
	for k, v := range c.LinkTypes {
		e.cap.linkTypes[k] = e.cap.baseLinkTypes[k] + v
	}
}

// rereadPiece returns the bytes of the piece ref refers to (for the
// reassembler, which keeps none of them: see reassemble.Assembler.RereadRefs).
func (e *Engine) rereadPiece(ref int64) ([]byte, error) {
	return e.bh.files.read([]int64{ref}, func(n int) []byte { return make([]byte, n) })
}
