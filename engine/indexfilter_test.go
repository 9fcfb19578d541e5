package engine_test

import (
	"context"
	"slices"
	"testing"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/session"
)

// A filter runs over the index and finds what it finds in a plain read.
func TestIndexFilter(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Index})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	want := 0
	for _, n := range st.Packets {
		if n.Type == "stdf" {
			want += n.Packets
		}
	}
	f := mustFilter(t, "stdf and src == 0")
	keyframePieces := 0
	if err := e.Index().Filter(context.Background(), f, 0, e.Index().Len(), func(i int) bool {
		keyframePieces++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	all := 0
	e.Index().Filter(context.Background(), mustFilter(t, "stdf"), 0, e.Index().Len(), func(int) bool { all++; return true })
	if all != want || keyframePieces == 0 || keyframePieces >= all {
		t.Errorf("stdf: %d of %d; keyframe pieces %d", all, want, keyframePieces)
	}
}

// A filter of one conversation ("conv == 2 and …") passes over the other
// conversations' packets without reading them, and matches what it
// matches packet by packet.
func TestIndexFilterOneConv(t *testing.T) {
	e := engine.New(engine.Config{Work: engine.Index})
	defer e.Close()
	if err := e.Run(context.Background(), "sample:modern", "sample:modern"); err != nil {
		t.Fatal(err)
	}
	x := e.Index()
	for _, src := range []string{"conv == 2", "stdf and conv == 3 and seq == 0", "conv == 1 and (stak or cdat)", "conv == 9"} {
		f := mustFilter(t, src)
		if _, ok := f.Conv(); !ok {
			t.Fatalf("%s: no conversation", src)
		}
		var got, want []int
		if err := x.Filter(context.Background(), f, 0, x.Len(), func(i int) bool { got = append(got, i); return true }); err != nil {
			t.Fatal(err)
		}
		var r session.Record
		for i := range x.Len() {
			if err := x.Record(i, &r); err != nil {
				t.Fatal(err)
			}
			if f.Match(&r) {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) || len(want) == 0 && src != "conv == 9" {
			t.Errorf("%s: %d packets, want the %d matched one by one", src, len(got), len(want))
		}
	}
}
