package filter

import (
	"net/netip"
	"strings"
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

// TestEntries: a legacy sdat's entries are a list of moves.
func TestEntries(t *testing.T) {
	tr := session.NewTracker(decode.Legacy)
	const cli, srv = "10.0.0.2:24785", "10.0.0.1:40000"
	sdat := decode.MustNew(decode.Legacy, "sdat").Set("frame", 900).Set("start_entry", 7).
		AddEntry(898, 5, 1, 17).AddEntry(899, 1, 2, 71)
	r := record(t, tr, 1, srv, cli, sdat)
	cases := []struct {
		expr string
		want bool
	}{
		{"any(entries, .data2 == 71)", true},
		{"any(entries, .type == 1 and .data1 == 2 and .data2 in [70, 71])", true},
		{"any(entries, .type == 1 and .data1 == 1)", false},
		{"all(entries, .frame >= 898)", true},
		{"none(entries, .data2 == 64)", true},
		{"one(entries, .type == 5)", true},
		{"n == 2 and start_entry == 7", true},
		{"any(entries, .frame == frame)", false},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(r); got != c.want {
			t.Errorf("%s: %v, want %v", c.expr, got, c.want)
		}
	}
	// A packet without entries matches no condition on them, negated or
	// not: all() is not vacuously true for a cdat.
	cdat := record(t, tr, 2, cli, srv, decode.MustNew(decode.Legacy, "cdat").Set("player", 1).Set("frame", 5))
	for _, e := range []string{"any(entries, .data2 == 71)", "not any(entries, .data2 == 71)", "all(entries, .type == 5)", "none(entries, .type == 5)"} {
		f, err := Compile(e)
		if err != nil {
			t.Fatal(err)
		}
		if f.Match(cdat) {
			t.Errorf("%s matches a cdat", e)
		}
	}
}

// TestPacketNumbers: the names that start with a digit, in every form.
func TestPacketNumbers(t *testing.T) {
	tr := session.NewTracker(decode.Legacy)
	hs := record(t, tr, 1, "10.0.0.2:24785", "10.0.0.1:24785", decode.MustNew(decode.Legacy, "1234"))
	cases := []struct {
		expr string
		want bool
	}{
		{"1234", true},
		{"5678", false},
		{"1234 or 5678", true},
		{"5678 or 1234", true},
		{"_1234 and c2s", true},
		{"not 1234", false},
		{"!5678", true},
		{"(1234 || 5678) && dport == 24785", true},
		{`type == "1234"`, true},
		{`type != "5678"`, true},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(hs); got != c.want {
			t.Errorf("%s: %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestNotBindsLoosely: "not x == y" is not (x == y).
func TestNotBindsLoosely(t *testing.T) {
	tr := session.NewTracker(decode.Legacy)
	stak := record(t, tr, 1, "10.0.0.2:24785", "10.0.0.1:40000", decode.MustNew(decode.Legacy, "stak").Set("player", 1).Set("frame", 700))
	for _, c := range []struct {
		expr string
		want bool
	}{
		{"not frame == 700", false},
		{"not frame == 701", true},
		{"! frame == 701", true},
		{"not frame in 0..100", true},
		{"not frame > 600 or stak", true},
		{"not stak == true", false},
		{"not stdf == false", false},
		{"not player != 1", true},
	} {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(stak); got != c.want {
			t.Errorf("%s: %v, want %v", c.expr, got, c.want)
		}
	}
}

// TestMismatchErrors: comparisons that could never hold are errors that
// say what to write instead.
func TestMismatchErrors(t *testing.T) {
	for _, c := range []struct{ expr, says string }{
		{"type == stdf", `write type == "stdf"`},
		{"stdf == type", `write type == "stdf"`},
		{"type != _1234", `write type != "1234"`},
		{"type == 1234", `write type == "1234"`},
		{`dir == c2s`, "c2s is a condition"},
		{`stdf == "stdf"`, "stdf is a condition"},
		{`hostname == 5`, `write hostname == "5"`},
		{"stdf or 5", "5 is a number, not a condition"},
		{"not 17", "17 is a number, not a condition"},
		{"42", "a number is not a condition"},
		{"stfd", `unknown name "stfd"`},
	} {
		_, err := Compile(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: error %v, want one that says %q", c.expr, err, c.says)
		}
	}
}

func TestHelp(t *testing.T) {
	h := Help()
	for _, line := range strings.Split(strings.TrimSuffix(h, "\n"), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("help line of %d columns: %s", n, line)
		}
	}
	// Every example in the help compiles.
	for _, e := range []string{`type == "stdf"`, "_1234", "1234 or 5678", "any(entries, .type == 1 and .data2 == 71)", "x in 100..200"} {
		if !strings.Contains(h, e) && !strings.Contains(h, strings.TrimPrefix(e, "x in ")) {
			t.Errorf("help does not show %s", e)
		}
	}
	for _, e := range []string{`type == "stdf"`, "_1234", "1234 or 5678", "any(entries, .type == 1 and .data2 == 71)", "frame in 100..200"} {
		if _, err := Compile(e); err != nil {
			t.Errorf("%s: %v", e, err)
		}
	}
}

// Conv finds the conversation a filter cannot match without, only where
// every match must be of it.
func TestFilterConv(t *testing.T) {
	for _, c := range []struct {
		src  string
		conv int
		ok   bool
	}{
		{"conv == 3", 3, true},
		{"stdf and conv == 3", 3, true},
		{"stdf && 3 == conv && seq == 0", 3, true},
		{"conv == 3 and (stdf or stak)", 3, true},
		{"conv == 3 or stdf", 0, false},
		{"not conv == 3", 0, false},
		{"conv != 3", 0, false},
		{"conv > 3 and stdf", 0, false},
		{"stdf", 0, false},
	} {
		f, err := Compile(c.src)
		if err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		if conv, ok := f.Conv(); conv != c.conv || ok != c.ok {
			t.Errorf("%s: Conv() = %d, %v; want %d, %v", c.src, conv, ok, c.conv, c.ok)
		}
	}
}

// TestMatchNewest: the version by either name, a length-prefixed text field
// and an enumerated field's value by its name, in the newest version.
func TestMatchNewest(t *testing.T) {
	v := decode.MustParseVersion("2026-07")
	// Each record from a tracker of its own: a tracker reuses its record.
	const cli, srv = "10.0.0.2:40919", "10.0.0.1:24785"
	cjon := record(t, session.NewTracker(v), 1, cli, srv, decode.MustNew(v, "cjon").Set("color", 3).SetBytes("name", []byte("p1")).SetBytes("hostname", []byte("lan-pc1")))
	srrf := record(t, session.NewTracker(v), 2, srv, cli, decode.MustNew(v, "srrf").Set("result", 5))
	cases := []struct {
		expr string
		on   *session.Record
		want bool
	}{
		{`version == "2026-07" and era == "2026-07"`, cjon, true},
		{`version == "modern"`, cjon, false},
		{`cjon and name == "p1" and hostname == "lan-pc1"`, cjon, true},
		{`name == "p2"`, cjon, false},
		{`srrf and result_name == "transfer_off"`, srrf, true},
		{`result_name == "saved"`, srrf, false},
		{`result == 5`, srrf, true},
		{`result_name == "saved"`, cjon, false},
	}
	for _, c := range cases {
		f, err := Compile(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if got := f.Match(c.on); got != c.want {
			t.Errorf("%s on %s: %v, want %v", c.expr, c.on.Packet.NameString(), got, c.want)
		}
	}
	if _, err := Compile(`src_name == "x"`); err == nil {
		t.Error("src_name compiled: src is not an enumerated field")
	}
}
