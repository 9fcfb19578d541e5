package filter

import (
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// record runs one payload through a tracker, so the record is as read
// sees it.
func record(t *testing.T, tr *session.Tracker, n int, src, dst string, p *decode.Packet) *session.Record {
	t.Helper()
	d := &source.Datagram{N: n, TS: time.Unix(0, 0), Src: netip.MustParseAddrPort(src), Dst: netip.MustParseAddrPort(dst)}
	d.Payload = decode.Encode(nil, p)
	d.Length = len(d.Payload)
	return tr.Process(d)
}

func TestMatch(t *testing.T) {
	tr := session.NewTracker(decode.Legacy)
	const cli, srv = "10.0.0.2:24785", "10.0.0.1:40000"
	record(t, tr, 1, srv, cli, decode.MustNew(decode.Legacy, "SJON").Set("player", 2).Set("color", 3))
	serr := record(t, tr, 2, srv, cli, decode.MustNew(decode.Legacy, "serr").Set("err_type", 1).Set("frame", 900).Set("c_sync", int64(decode.EncodeNegative(-3))))
	cases := []struct {
		expr string
		want bool
	}{
		{"serr", true},
		{"stdf", false},
		{`type == "serr"`, true},
		{"s2c and not c2s", true},
		{`dir == "s2c" and era == "legacy"`, true},
		{"player == 2", true},
		{"player == 1", false},
		{"c_sync == -3", true},
		{"c_sync_raw == 253", true},
		{"c_sync < 0 and late_total == 0", true},
		{"frame in 800..1000", true},
		{"frame in 0..899", false},
		{"num == 2 and len == 17", true},
		{"dst > 5", false},  // serr has no dst: nil compares false
		{"dst != 5", false}, // != too
		{"frame != 900", false},
		{"frame != 901", true},
		{"not (frame == 901)", true},
		{`client == "10.0.0.2:24785" and sport == 40000 and daddr == "10.0.0.2"`, true},
		{"malformed or unknown", false},
		{`type matches "^s"`, true},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(serr); got != c.want {
			t.Errorf("%s: %v, want %v", c.expr, got, c.want)
		}
	}
	for _, bad := range []string{"", "serr and (", "frame ==", "1 +", "stfd", "serr and fram == 900"} {
		if _, err := Compile(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}
