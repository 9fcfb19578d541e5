package main

import (
	"encoding/hex"
	"net/netip"
	"strconv"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/timefmt"
)

// jsonObject appends one JSON object field by field, with the documented
// key order: the writer behind the JSON lines of read, states and diff,
// which are written by hand to cost no allocation per packet. Keys are
// constants that need no escaping.
type jsonObject struct {
	b []byte
	n int // fields written
}

// openJSON starts an object at the end of b.
func openJSON(b []byte) jsonObject { return jsonObject{b: append(b, '{')} }

// key starts the field k.
func (o *jsonObject) key(k string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, k...)
	o.b = append(o.b, `":`...)
}

// int writes a number field.
func (o *jsonObject) int(k string, v int64) {
	o.key(k)
	o.b = strconv.AppendInt(o.b, v, 10)
}

// float writes a number field (null for NaN and infinities).
func (o *jsonObject) float(k string, v float64) {
	o.key(k)
	o.b = decode.AppendJSONFloat(o.b, v)
}

// str writes a string field, escaped.
func (o *jsonObject) str(k, v string) {
	o.key(k)
	o.b = decode.AppendJSONString(o.b, v)
}

// name writes a string field that needs no escaping (an enum's name).
func (o *jsonObject) name(k, v string) {
	o.key(k)
	o.b = append(o.b, '"')
	o.b = append(o.b, v...)
	o.b = append(o.b, '"')
}

// addr writes an endpoint as a string field.
func (o *jsonObject) addr(k string, a netip.AddrPort) {
	o.key(k)
	o.b = append(o.b, '"')
	o.b = a.AppendTo(o.b)
	o.b = append(o.b, '"')
}

// hex writes bytes as a string field of hex digits.
func (o *jsonObject) hex(k string, v []byte) {
	o.key(k)
	o.b = append(o.b, '"')
	o.b = hex.AppendEncode(o.b, v)
	o.b = append(o.b, '"')
}

// time writes a capture time as RFC 3339 with nine fraction digits, so
// that time stamps have one width and sort as text.
func (o *jsonObject) time(k string, ts time.Time) {
	o.key(k)
	o.b = append(o.b, '"')
	o.b = timefmt.AppendRFC3339(o.b, ts, 9)
	o.b = append(o.b, '"')
}

// raw writes a field whose value is JSON already.
func (o *jsonObject) raw(k string, v []byte) {
	o.key(k)
	o.b = append(o.b, v...)
}

// close ends the object and returns the bytes.
func (o *jsonObject) close() []byte { return append(o.b, '}') }
