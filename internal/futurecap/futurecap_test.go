package futurecap

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"
	"time"
)

type keep struct{ payloads [][]byte }

func (k *keep) WriteDatagram(_ time.Time, _, _ netip.AddrPort, p []byte) error {
	k.payloads = append(k.payloads, bytes.Clone(p))
	return nil
}

// Each rewrite lengthens its packets where a new field would go and
// leaves every other packet as it was.
func TestRewrite(t *testing.T) {
	extra := binary.LittleEndian.AppendUint32(nil, Extra)
	stdf := []byte("stdf\x00\x00\x00\x00\x01\x00\x00\x00data")
	stak := []byte("stak\x01\x00\x00\x00")
	cdat := []byte("cdat\x01\x00\x00\x00")
	for _, tc := range []struct {
		rw               Rewrite
		stdf, stak, cdat []byte
		rewritten        int
	}{
		{Stdf, append(append([]byte("stdf"), extra...), stdf[4:]...), stak, cdat, 1},
		{Stak, stdf, append(bytes.Clone(stak), extra...), cdat, 1},
		{Stdf | Stak, append(append([]byte("stdf"), extra...), stdf[4:]...), append(bytes.Clone(stak), extra...), cdat, 2},
	} {
		k := &keep{}
		w := &Writer{W: k, Rewrite: tc.rw}
		for _, p := range [][]byte{stdf, stak, cdat, []byte("st")} {
			if err := w.WriteDatagram(time.Time{}, netip.AddrPort{}, netip.AddrPort{}, p); err != nil {
				t.Fatal(err)
			}
		}
		for i, want := range [][]byte{tc.stdf, tc.stak, tc.cdat, []byte("st")} {
			if !bytes.Equal(k.payloads[i], want) {
				t.Errorf("rewrite %b: packet %d is % x, want % x", tc.rw, i, k.payloads[i], want)
			}
		}
		if w.Rewritten != tc.rewritten {
			t.Errorf("rewrite %b: %d rewritten, want %d", tc.rw, w.Rewritten, tc.rewritten)
		}
	}
}
