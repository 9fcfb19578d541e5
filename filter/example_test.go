package filter_test

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/filter"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

func ExampleCompile() {
	f, err := filter.Compile("sdat and any(entries, .type == 1 and .data2 == 71)")
	if err != nil {
		fmt.Println(err)
		return
	}
	sdat := decode.MustNew(decode.Legacy, "sdat").Set("frame", 900).AddEntry(899, 1, 2, 71)
	tr := session.NewTracker(decode.Legacy)
	r := tr.Process(&source.Datagram{N: 1, TS: time.Unix(0, 0),
		Src: netip.MustParseAddrPort("10.0.0.1:50001"), Dst: netip.MustParseAddrPort("10.0.0.3:24785"),
		Payload: decode.Encode(nil, sdat)})
	fmt.Println(f.Match(r))

	_, err = filter.Compile("type == stdf")
	fmt.Println(err)
	// Output:
	// true
	// filter "type == stdf": stdf is a condition (true for stdf packets), not the text "stdf": write type == "stdf", or stdf alone
}
