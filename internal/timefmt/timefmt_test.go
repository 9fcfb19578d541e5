package timefmt_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/timefmt"
)

// stamps are the time stamps of a capture whose packets are out of time
// order; the expected columns below are what tshark 4 prints for the same
// capture written with nanosecond (ns) and microsecond (us) time stamps
// (TZ=UTC tshark -r x.pcap -t FORMAT -T fields -e _ws.col.Time).
var stamps = []time.Time{
	time.Unix(1795304467, 663841123),
	time.Unix(1795304467, 663841999),
	time.Unix(1795304467, 1),
	time.Unix(1795304468, 999999999),
	time.Unix(1795304468, 999999000),
	time.Unix(1795304469, 0),
	time.Unix(1795304467, 663841123),
}

var tshark = map[string]string{
	"ns a":  "23:41:07.663841123 23:41:07.663841999 23:41:07.000000001 23:41:08.999999999 23:41:08.999999000 23:41:09.000000000 23:41:07.663841123",
	"ns ad": "2026-11-21 23:41:07.663841123 2026-11-21 23:41:07.663841999 2026-11-21 23:41:07.000000001 2026-11-21 23:41:08.999999999 2026-11-21 23:41:08.999999000 2026-11-21 23:41:09.000000000 2026-11-21 23:41:07.663841123",
	"ns r":  "0.000000000 0.000000876 -0.663841122 1.336158876 1.336157877 1.336158877 0.000000000",
	"ns d":  "0.000000000 0.000000876 -0.663841998 1.999999998 -0.000000999 0.000001000 -1.336158877",
	"ns e":  "1795304467.663841123 1795304467.663841999 1795304467.000000001 1795304468.999999999 1795304468.999999000 1795304469.000000000 1795304467.663841123",
	"us a":  "23:41:07.663841 23:41:07.663841 23:41:07.000000 23:41:08.999999 23:41:08.999999 23:41:09.000000 23:41:07.663841",
	"us ad": "2026-11-21 23:41:07.663841 2026-11-21 23:41:07.663841 2026-11-21 23:41:07.000000 2026-11-21 23:41:08.999999 2026-11-21 23:41:08.999999 2026-11-21 23:41:09.000000 2026-11-21 23:41:07.663841",
	"us r":  "0.000000 0.000000 -0.663841 1.336158 1.336158 1.336159 0.000000",
	"us d":  "0.000000 0.000000 -0.663841 1.999999 0.000000 0.000001 -1.336159",
	"us e":  "1795304467.663841 1795304467.663841 1795304467.000000 1795304468.999999 1795304468.999999 1795304469.000000 1795304467.663841",
}

func TestLikeTshark(t *testing.T) {
	for key, want := range tshark {
		res, name, _ := strings.Cut(key, " ")
		format, err := timefmt.ParseFormat(name)
		if err != nil {
			t.Fatal(err)
		}
		digits := 9 // nanoseconds
		if res == "us" {
			digits = 6
		}
		f := timefmt.New(format, digits)
		var got []string
		for _, ts := range stamps {
			if res == "us" {
				ts = ts.Truncate(time.Microsecond) // as a microsecond capture holds it
			}
			got = append(got, string(f.Append(nil, ts)))
		}
		if g := strings.Join(got, " "); g != want {
			t.Errorf("%s:\n got %s\nwant %s", key, g, want)
		}
	}
}

// TestTruncates: fewer digits than the time stamp has cut it, never round
// it, whichever the sign.
func TestTruncates(t *testing.T) {
	ts := time.Unix(1795304467, 999999999)
	t0 := time.Unix(1795304467, 0)
	cases := []struct {
		got, want string
	}{
		{string(timefmt.AppendEpoch(nil, ts, 6)), "1795304467.999999"},
		{string(timefmt.AppendEpoch(nil, ts, 3)), "1795304467.999"},
		{string(timefmt.AppendEpoch(nil, ts, 0)), "1795304467"},
		{string(timefmt.AppendTime(nil, ts, 6)), "23:41:07.999999"},
		{string(timefmt.AppendDateTime(nil, ts, 1)), "2026-11-21 23:41:07.9"},
		{string(timefmt.AppendSince(nil, ts, t0, 6)), "0.999999"},
		{string(timefmt.AppendSince(nil, t0, ts, 6)), "-0.999999"},
		{string(timefmt.AppendSince(nil, t0, ts, 0)), "-0"},
		{string(timefmt.AppendSince(nil, t0, t0.Add(999), 6)), "-0.000000"},
		{string(timefmt.AppendEpoch(nil, ts, 12)), "1795304467.999999999"}, // at most 9 digits
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %s, want %s", i, c.got, c.want)
		}
	}
}

// TestBefore1970: time stamps before the epoch (a clock that was never
// set): the time of day counts forward within its second, the epoch
// seconds are negative.
func TestBefore1970(t *testing.T) {
	ts := time.Unix(-2, 500000000) // 1969-12-31 23:59:58.5 = -1.5 s
	cases := []struct {
		got, want string
	}{
		{string(timefmt.AppendEpoch(nil, ts, 6)), "-1.500000"},
		{string(timefmt.AppendEpoch(nil, time.Unix(-1, 999999999), 6)), "-0.000000"},
		{string(timefmt.AppendEpoch(nil, time.Unix(-1, 999999999), 9)), "-0.000000001"},
		{string(timefmt.AppendEpoch(nil, time.Unix(-2, 499999999), 6)), "-1.500000"},
		{string(timefmt.AppendEpoch(nil, time.Unix(-86400*365, 0), 3)), "-31536000.000"},
		{string(timefmt.AppendTime(nil, ts, 6)), "23:59:58.500000"},
		{string(timefmt.AppendDateTime(nil, ts, 9)), "1969-12-31 23:59:58.500000000"},
		{string(timefmt.AppendRFC3339(nil, ts, 3)), "1969-12-31T23:59:58.500Z"},
		{string(timefmt.AppendDateTime(nil, time.Date(1, 1, 1, 0, 0, 0, 7, time.UTC), 9)), "0001-01-01 00:00:00.000000007"},
		{string(timefmt.AppendEpoch(nil, time.Unix(0, 0), 6)), "0.000000"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %s, want %s", i, c.got, c.want)
		}
	}
}

func TestRFC3339FixedWidth(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	cases := []struct {
		ts     time.Time
		digits int
		want   string
	}{
		{time.Date(2026, 11, 21, 23, 41, 7, 0, time.UTC), 9, "2026-11-21T23:41:07.000000000Z"},
		{time.Date(2026, 11, 21, 23, 41, 7, 120000000, time.UTC), 9, "2026-11-21T23:41:07.120000000Z"},
		{time.Date(2026, 11, 21, 23, 41, 7, 120000999, time.UTC), 6, "2026-11-21T23:41:07.120000Z"},
		{time.Date(2026, 11, 22, 0, 41, 7, 5, loc), 9, "2026-11-21T23:41:07.000000005Z"},
		{time.Date(2026, 11, 21, 23, 41, 7, 999999999, time.UTC), 0, "2026-11-21T23:41:07Z"},
	}
	for _, c := range cases {
		got := string(timefmt.AppendRFC3339(nil, c.ts, c.digits))
		if got != c.want {
			t.Errorf("%v/%d: %s, want %s", c.ts, c.digits, got, c.want)
		}
		if _, err := time.Parse(time.RFC3339Nano, got); err != nil {
			t.Errorf("%s does not parse as RFC 3339: %v", got, err)
		}
	}
}

func TestRelativeFromSetFirst(t *testing.T) {
	f := timefmt.New(timefmt.Relative, 6)
	f.SetFirst(time.Unix(100, 0))
	if got := string(f.Append(nil, time.Unix(99, 250000000))); got != "-0.750000" {
		t.Errorf("%s", got)
	}
	if got := string(f.Append(nil, time.Unix(112, 345678901))); got != "12.345678" {
		t.Errorf("%s", got)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"a", "ad", "r", "d", "e"} {
		f, err := timefmt.ParseFormat(s)
		if err != nil || f.String() != s {
			t.Errorf("%s: %v %v", s, f, err)
		}
	}
	for _, s := range []string{"", "x", "A", "dd", "u"} {
		if _, err := timefmt.ParseFormat(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
}

// The absolute format caches the text of the current second: a new
// second, earlier or later, is written afresh.
func TestAbsoluteAcrossSeconds(t *testing.T) {
	f := timefmt.New(timefmt.Absolute, 6)
	var got []string
	for _, ts := range []time.Time{time.Unix(59, 1000), time.Unix(60, 2000), time.Unix(59, 3000), time.Unix(86400+3661, 999999)} {
		got = append(got, string(f.Append(nil, ts)))
	}
	if g := strings.Join(got, " "); g != "00:00:59.000001 00:01:00.000002 00:00:59.000003 01:01:01.000999" {
		t.Error(g)
	}
}

func BenchmarkAbsolute(b *testing.B) {
	f := timefmt.New(timefmt.Absolute, 6)
	buf := make([]byte, 0, 64)
	ts := time.Unix(1795304467, 663841123)
	for i := 0; i < b.N; i++ {
		buf = f.Append(buf[:0], ts.Add(time.Duration(i)*time.Millisecond))
	}
}

func ExampleFormatter() {
	f := timefmt.New(timefmt.Delta, 6)
	for _, ts := range []time.Time{time.Unix(1795304467, 663841123), time.Unix(1795304467, 688841999), time.Unix(1795304467, 600000000)} {
		fmt.Println(string(f.Append(nil, ts)))
	}
	fmt.Println(string(timefmt.AppendRFC3339(nil, time.Unix(1795304467, 663841123), 9)))
	// Output:
	// 0.000000
	// 0.025000
	// -0.088841
	// 2026-11-21T23:41:07.663841123Z
}
