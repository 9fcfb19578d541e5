package session

import (
	"net/netip"

	"github.com/pmdump/pmdump/decode"
	"testing"
)

// TestJoinNames: learn reads the join fields only from the packets it
// names as joins, so those must be every layout the join fields are in.
func TestJoinNames(t *testing.T) {
	for _, ref := range [...]struct {
		name   string
		layout func() []string
	}{
		{"hostname", func() []string { return names(joinHostname.Layouts()) }},
		{"color", func() []string { return names(joinColor.Layouts()) }},
		{"player", func() []string { return names(joinPlayer.Layouts()) }},
		{"level", func() []string { return names(joinLevel.Layouts()) }},
		{"slsn", func() []string { return names(joinSLSN.Layouts()) }},
	} {
		for _, n := range ref.layout() {
			switch n {
			case "CJON", "cjon", "SJON", "sjon":
			default:
				t.Errorf("join field %s is in layout %s, which learn does not read it from", ref.name, n)
			}
		}
	}
}

// TestRecentSlots: the clients of a game (one address each, or one host
// with ports in a row) have slots of their own among the conversations
// found lately.
func TestRecentSlots(t *testing.T) {
	for _, tc := range []struct {
		name    string
		clients []string
	}{
		{"hosts", []string{"10.0.0.2:24785", "10.0.0.3:24785", "10.0.0.4:24785", "10.0.0.5:24785", "10.0.0.6:24785", "10.0.0.7:24785", "10.0.0.8:24785"}},
		{"ports", []string{"192.168.1.5:50001", "192.168.1.5:50002", "192.168.1.5:50003", "192.168.1.5:50004"}},
		{"v6", []string{"[fe80::1]:24785", "[fe80::2]:24785", "[fe80::3]:24785"}},
	} {
		seen := map[int]string{}
		for _, s := range tc.clients {
			i := recentSlot(netip.MustParseAddrPort(s))
			if i < 0 || i >= recentConvs {
				t.Fatalf("%s: slot %d", s, i)
			}
			if o, ok := seen[i]; ok {
				t.Errorf("%s: %s and %s share slot %d", tc.name, o, s, i)
			}
			seen[i] = s
		}
	}
}

func names(ls []*decode.Layout) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Name)
	}
	return out
}
