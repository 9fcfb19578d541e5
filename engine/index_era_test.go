package engine

import (
	"context"
	"testing"

	"github.com/pmdump/pmdump/filter"
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

// TestRecordClient checks that a packet read again from the index names its
// conversation's client, as the tracker did, so filters on client match.
func TestRecordClient(t *testing.T) {
	e := New(Config{Work: Index})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	x := e.Index()
	var r session.Record
	clients := map[string]int{}
	for i := 0; i < x.Len(); i++ {
		if err := x.Record(i, &r); err != nil {
			t.Fatal(err)
		}
		if r.Conv == nil || !r.Client.IsValid() || r.Client != r.Conv.Client || (r.Client != r.Src && r.Client != r.Dst) {
			t.Fatalf("packet %d: client %v, conversation %+v", i, r.Client, r.Conv)
		}
		clients[r.Client.String()]++
	}
	f, err := filter.Compile(`client == "10.0.0.3:24785"`)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := x.Filter(context.Background(), f, 0, x.Len(), func(int) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if n == 0 || n != clients["10.0.0.3:24785"] {
		t.Errorf("filter on client matched %d packets, want %d", n, clients["10.0.0.3:24785"])
	}
}
