package session_test

import (
	"io"
	"testing"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/session"
	"github.com/pmdump/pmdump/source"
)

// trackCapture runs a real capture (../shared/captures, read-only) through
// a tracker; it skips the test when the capture is not there.
func trackCapture(t *testing.T, rel string, force decode.Version) *session.Tracker {
	t.Helper()
	path := realcap.Path(t, rel)
	r, err := source.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tr := session.NewTracker(force)
	for {
		d, err := r.Next()
		if err == io.EOF {
			return tr
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec := tr.Process(d); rec.Kind != session.Game {
			t.Fatalf("frame %d: %s %s: %v", d.N, rec.Kind, rec.Packet.NameString(), rec.Err())
		}
	}
}

// The manifests' facts about each capture's conversations.
func TestRealConversations(t *testing.T) {
	type conv struct {
		client, server uint16 // ports
		player         int    // 0: one of 1..3, not documented per client
		color, level   int    // 0: not checked
	}
	tests := []struct {
		file    string
		era     decode.Version
		packets int
		convs   []conv
	}{
		{"legacy/basic/capture.pcap", decode.Legacy, 7332, []conv{{24786, 52856, 1, 11, 4}}},
		{"legacy/basic/capture.pcapng", decode.Legacy, 7332, []conv{{24786, 52856, 1, 11, 4}}},
		{"modern/basic/basic.pcap", decode.Modern, 5532, []conv{{24786, 58424, 1, 0, 1}}},
		{"modern/basic_pcapng/basic.pcapng", decode.Modern, 6466, []conv{{24786, 56087, 1, 0, 1}}},
		{"modern/multi/multi.pcap", decode.Modern, 14326, []conv{{24786, 47183, 0, 0, 1}, {24787, 47316, 0, 0, 1}, {24788, 59425, 0, 0, 1}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			for _, force := range []decode.Version{decode.VersionUnknown, tt.era} {
				tr := trackCapture(t, tt.file, force)
				st := tr.Stats
				if st.Game.Packets != tt.packets || st.Eras[tt.era] != tt.packets && force == tt.era {
					t.Errorf("era %s: %d game packets (%v by era), want %d", force, st.Game.Packets, st.Eras, tt.packets)
				}
				if force == decode.VersionUnknown && st.Eras[tt.era] < tt.packets-len(tt.convs) {
					// Only a conversation's first 1234 may precede the evidence.
					t.Errorf("auto: %d of %d packets in the %s era", st.Eras[tt.era], tt.packets, tt.era)
				}
				convs := tr.Conversations()
				if len(convs) != len(tt.convs) {
					t.Fatalf("%d conversations, want %d", len(convs), len(tt.convs))
				}
				players := map[int]bool{}
				for i, w := range tt.convs {
					c := convs[i]
					if c.Client.Port() != w.client || c.Server.Port() != w.server || c.Listen.Port() != 24785 ||
						c.Version != tt.era || c.Hostname != "vm" || w.level != 0 && c.Level != w.level || w.color != 0 && c.Color != w.color {
						t.Errorf("conversation %d: %+v, want %+v", i+1, *c, w)
					}
					if w.player != 0 && c.Player != w.player || c.Player < 1 || c.Player > 3 || players[c.Player] {
						t.Errorf("conversation %d: player %d", i+1, c.Player)
					}
					players[c.Player] = true
				}
			}
		})
	}
}

// TestRealLossy: the lossy legacy capture has two clients.
func TestRealLossy(t *testing.T) {
	tr := trackCapture(t, "legacy/lossy/capture.pcap", decode.VersionUnknown)
	if tr.Stats.Game.Packets != 15786 {
		t.Errorf("%d game packets, manifest says 15786", tr.Stats.Game.Packets)
	}
	convs := tr.Conversations()
	if len(convs) != 2 {
		t.Fatalf("%d conversations", len(convs))
	}
	for _, c := range convs {
		if c.Version != decode.Legacy || c.Player < 1 || c.Player > 2 || c.Server.Port() == decode.ListenPort || c.Level != 4 {
			t.Errorf("conversation %+v", *c)
		}
	}
	if convs[0].Player == convs[1].Player || convs[0].Server == convs[1].Server {
		t.Errorf("the two clients share player %d / server %v", convs[0].Player, convs[0].Server)
	}
	per := tr.Stats.PerName()
	for name, n := range map[string]int{"serr": 4316, "sdak": 2600, "stdf": 654} {
		if per[name] != n {
			t.Errorf("%s: %d, manifest says %d", name, per[name], n)
		}
	}
}
