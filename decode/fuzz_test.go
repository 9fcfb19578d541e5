package decode_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// FuzzDecode decodes any bytes in both eras. Decoding never panics, the
// renderings of whatever was decoded never panic and give valid JSON, and a
// payload that decodes cleanly encodes back to exactly the same bytes.
//
// The seed corpus in testdata/fuzz/FuzzDecode holds packets of every type of
// both eras (as in the real captures), truncated and hostile variants.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("stdf\x00\x00\x00\x00\x00\x00\x00\xc8\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var p decode.Packet
		for _, era := range decode.Versions() {
			err := decode.Decode(&p, data, era)
			if err != p.Err {
				t.Fatalf("%s: returned %v, p.Err %v", era, err, p.Err)
			}
			p.Player()
			p.Frame()
			p.Payload()
			p.AppendSummary(nil)
			p.AppendTree(nil, "  ")
			if js := p.AppendJSONFields(nil); !json.Valid(js) {
				t.Fatalf("%s: invalid JSON %s", era, js)
			}
			if err != nil {
				continue
			}
			if p.Layout == nil || p.Version != era || !bytes.Equal(p.Raw, data) {
				t.Fatalf("%s: clean decode with layout %v, raw % x", era, p.Layout, p.Raw)
			}
			if got := decode.Encode(nil, &p); !bytes.Equal(got, data) {
				t.Fatalf("%s %s: decoded cleanly but encodes to\n% x\nnot\n% x", era, p.NameString(), got, data)
			}
		}
	})
}
