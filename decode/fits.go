package decode

import (
	"errors"
	"fmt"
	"strings"
)

// Fit is what one payload's bytes say about the versions that could have
// sent it.
type Fit struct {
	// Named are the versions that have a packet of its name.
	Named VersionSet
	// Decodes are the versions whose layout of the name decodes it
	// without an error.
	Decodes VersionSet
	// Clean are the versions of Decodes it also agrees with beyond its
	// layout: its piece header cut as the version cuts pieces (the piece
	// size, the start of each piece).
	Clean VersionSet
}

// Best is the set the bytes point to: Clean when it has any version, else
// Decodes.
func (f Fit) Best() VersionSet {
	if f.Clean != 0 {
		return f.Clean
	}
	return f.Decodes
}

// Fits decodes payload in each distinct layout of its name (scratch is
// overwritten) and says which versions it fits.
func Fits(payload []byte, scratch *Packet) Fit {
	var f Fit
	for _, l := range LayoutsOf(payload) {
		f.Named |= l.versions
		v := l.versions.Oldest()
		if Decode(scratch, payload, v) != nil {
			continue
		}
		f.Decodes |= l.versions
		for _, w := range l.versions.Versions() {
			if agrees(scratch, w) {
				f.Clean = f.Clean.With(w)
			}
		}
	}
	return f
}

// Agrees reports whether p, decoded cleanly, also agrees with version v
// beyond its layout (see Fit.Clean).
func Agrees(p *Packet, v Version) bool { return p.Err == nil && p.Layout != nil && agrees(p, v) }

// agrees checks what a layout alone cannot: a piece is cut as version v
// cuts them, every piece but the last PieceSize bytes at seq × PieceSize,
// the last one shorter.
func agrees(p *Packet, v Version) bool {
	l := p.Layout
	if !l.pieces() || l.size < 0 || l.size >= len(p.Values) {
		return true
	}
	ps := int64(v.PieceSize())
	seq, count, start, size := p.Values[l.seq].Int, p.Values[l.count].Int, p.Values[l.start].Int, p.Values[l.size].Int
	if start != seq*ps {
		return false
	}
	if seq < count-1 {
		return size == ps
	}
	return size < ps
}

// Plausible narrows a set of versions that a payload fits in both byte
// orders (a 10-byte cdat is legacy and modern alike) to the byte order that
// reads the smaller game frame: game frames are small positive numbers. A
// set of one byte order, or a packet without a frame, is returned as it is.
func Plausible(payload []byte, s VersionSet, scratch *Packet) VersionSet {
	var be, le VersionSet
	for _, v := range s.Versions() {
		if v.Info().BigEndian {
			be = be.With(v)
		} else {
			le = le.With(v)
		}
	}
	if be == 0 || le == 0 {
		return s
	}
	frame := func(set VersionSet) (uint32, bool) {
		if Decode(scratch, payload, set.Oldest()) != nil {
			return 0, false
		}
		f, ok := scratch.Frame()
		return uint32(f), ok
	}
	fb, okb := frame(be)
	fl, okl := frame(le)
	switch {
	case !okb || !okl:
		return s
	case fb < fl:
		return be
	}
	return le
}

// ErrNoVersion is returned (wrapped) for a packet whose bytes fit no
// version's layout of its name.
var ErrNoVersion = errors.New("fits no known version")

// Explain says why payload fits no version: a short reason ("stdf header
// fits no known version", "cjon of 30 bytes fits no known version") and,
// for each distinct layout of its name, the versions that have it and why
// it does not decode there. scratch is overwritten.
func Explain(payload []byte, scratch *Packet) (reason string, detail []string) {
	ls := LayoutsOf(payload)
	if len(ls) == 0 {
		if len(payload) < 4 {
			return fmt.Sprintf("%d-byte payload has no packet name", len(payload)), nil
		}
		return fmt.Sprintf("%q is a packet of no known version", payload[:4]), nil
	}
	name := string(payload[:4])
	if ls[0].pieces() {
		reason = name + " header fits no known version"
	} else {
		reason = fmt.Sprintf("%s of %d bytes fits no known version", name, len(payload))
	}
	for _, l := range ls {
		why := "its pieces are not cut as this version cuts them"
		if err := Decode(scratch, payload, l.versions.Oldest()); err != nil {
			why = err.Error()
		}
		detail = append(detail, versionRange(l.versions)+": "+why)
	}
	return reason, detail
}

// versionRange names a set of versions compactly: "modern…2024-05" for a
// run of consecutive versions.
func versionRange(s VersionSet) string {
	vs := s.Versions()
	var parts []string
	for i := 0; i < len(vs); {
		j := i
		for j+1 < len(vs) && vs[j+1] == vs[j]+1 {
			j++
		}
		switch {
		case j == i:
			parts = append(parts, vs[i].String())
		case j == i+1:
			parts = append(parts, vs[i].String(), vs[j].String())
		default:
			parts = append(parts, vs[i].String()+"…"+vs[j].String())
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// Range names a set of versions compactly ("2026-01…2026-07").
func (s VersionSet) Range() string { return versionRange(s) }

// DecodeUnrecognised fills p for a packet of a conversation of no known
// version: its name and bytes, no layout, and the reason (Explain) as an
// ErrNoVersion, which it returns.
func DecodeUnrecognised(p *Packet, payload []byte) error {
	Decode(p, payload, VersionUnknown)
	var scratch Packet
	reason, _ := Explain(payload, &scratch)
	p.Err = noVersionError(reason)
	return p.Err
}

// noVersionError is a packet's reason for fitting no version; it is an
// ErrNoVersion, and says the reason alone (which already says so).
type noVersionError string

func (e noVersionError) Error() string        { return string(e) }
func (e noVersionError) Is(target error) bool { return target == ErrNoVersion }
