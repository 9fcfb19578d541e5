package engine

import (
	"context"
	"testing"

	"github.com/pmdump/pmdump/session"
)

// TestRecordBeforeEraKnown decodes again the packets a game starts with,
// sent before its conversation's era was known.
func TestRecordBeforeEraKnown(t *testing.T) {
	for _, sample := range []string{"sample:modern", "sample:legacy"} {
		e := New(Config{Work: Index})
		if err := e.Run(context.Background(), sample); err != nil {
			t.Fatal(err)
		}
		x := e.Index()
		var r session.Record
		for i := 0; i < min(x.Len(), 50); i++ {
			if err := x.Record(i, &r); err != nil {
				t.Errorf("%s: %v", sample, err)
			}
		}
		if err := x.Record(0, &r); err == nil && string(r.Packet.Name[:]) != "1234" {
			t.Errorf("%s: the first packet is %q, want 1234", sample, r.Packet.Name[:])
		}
		e.Close()
	}
}
