package drive

import (
	"context"
	"testing"

	"github.com/pmdump/pmdump/internal/realcap"
)

func TestRealMultiScheduleTmp(t *testing.T) {
	rec, err := Load(context.Background(), []string{realcap.Path(t, "modern/multi/multi.pcap")}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	t.Logf("clients %d actions %d states %d end %v counts %v", len(rec.Clients), len(rec.Actions), rec.States, rec.End, rec.Counts())
	for _, c := range rec.Clients {
		t.Logf("%d %d %v %v %v", c.N, c.Player, c.Join, c.Last, c.Addr)
	}
	n := 0
	for _, a := range rec.Actions {
		if a.Check == Uncertain {
			if n < 40 {
				t.Logf("%s %s %s", a, a.Check, a.Reason)
			}
			n++
		}
	}
}
