package engine

import (
	"errors"
	"fmt"
)

// inputEnded records the error that ended input in before its end, after
// frames frames of it were read: an input of which nothing could be read
// is unreadable (Run's error then wraps ErrUnreadable); one that ends in
// the middle of a record, or at a record that cannot be read, is damaged
// (Stats.Damaged), and what came before it stays analysed. e.mu is held.
func (e *Engine) inputEnded(in *Input, frames int, err error) {
	if in == nil { // a live source: its end is not the capture's damage
		e.warnf("%v", err)
		return
	}
	if frames == 0 {
		err = fmt.Errorf("cannot read %s: nothing in it could be read: %w", in.Name, err)
		e.cap.unreadable = append(e.cap.unreadable, err.Error())
		e.cap.emptyInputs = append(e.cap.emptyInputs, err)
		if e.wants(WarningEvents) {
			e.emit(WarningEvent{Message: err.Error(), Unreadable: true})
		}
		return
	}
	e.cap.damaged = append(e.cap.damaged, err.Error())
	e.warnf("%v", err)
}

// takeEmptyInputs returns the inputs of which nothing could be read since
// the last call.
func (e *Engine) takeEmptyInputs() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	errs := e.cap.emptyInputs
	e.cap.emptyInputs = nil
	return errs
}

// unreadableError is Run's error for the inputs that could not be read.
func unreadableError(errs []error, inputs int) error {
	return fmt.Errorf("%d of %d inputs could not be read: %w", len(errs), inputs, errors.Join(append([]error{ErrUnreadable}, errs...)...))
}

// Damaged returns the inputs that ended at a damaged record so far (as
// Stats.Damaged, without computing the other figures).
func (e *Engine) Damaged() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.cap.damaged...)
}
