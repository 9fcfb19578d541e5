package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pmdump/pmdump/internal/netnstest"
)

// statsConvs is what pmdump stats --json says of each conversation.
type statsConvs struct {
	Conversations []struct {
		Client, Server, Listen string
		Era                    string
		Player, Packets, Bytes int
		ByName                 []struct {
			Type, Dir string
			Packets   int
		} `json:"by_name"`
	}
}

func convStats(t *testing.T, path string) statsConvs {
	t.Helper()
	var out, errb syncBuffer
	if code := run([]string{"stats", "--json", path}, &out, &errb); code != exitOK {
		t.Fatalf("stats %s: exit %d: %s", path, code, errb.String())
	}
	var s statsConvs
	if err := json.Unmarshal([]byte(out.String()), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A replay with both roles, captured on the loopback device of a network
// namespace, analyses as the recording does: the same conversations, each
// with its own client and server endpoints, the same packets of each name
// and direction in each, the same era and player.
func TestReplayCapturedApart(t *testing.T) {
	ns := netnstest.New(t)
	orig := realcapOrSample(t)
	out := filepath.Join(t.TempDir(), "replayed.pcap")
	var liveOut, liveErr, repOut, repErr syncBuffer
	liveCode, repCode := -1, -1
	var wg sync.WaitGroup
	wg.Add(2)
	go netnstest.Run(ns, func() error {
		defer wg.Done()
		liveCode = run([]string{"live", "-i", "lo", "--duration", "1500ms", "-w", out}, &liveOut, &liveErr)
		return nil
	})
	go func() {
		defer wg.Done()
		if err := waitFor(&liveErr, "capturing on lo"); err != nil {
			t.Error(err)
			return
		}
		netnstest.Run(ns, func() error {
			repCode = run([]string{"replay", orig, "--to", "127.0.0.1:24785", "--asap"}, &repOut, &repErr)
			return nil
		})
	}()
	wg.Wait()
	if liveCode != 0 || repCode != 0 {
		t.Fatalf("live exit %d: %s\nreplay exit %d: %s", liveCode, liveErr.String(), repCode, repErr.String())
	}
	want, got := convStats(t, orig), convStats(t, out)
	if len(got.Conversations) != len(want.Conversations) {
		t.Fatalf("the capture of the replay has %d conversations, the recording %d\nreplay: %s", len(got.Conversations), len(want.Conversations), repOut.String())
	}
	clients, servers := map[string]bool{}, map[string]bool{}
	for i, g := range got.Conversations {
		w := want.Conversations[i]
		if g.Packets != w.Packets || g.Bytes != w.Bytes || g.Era != w.Era || g.Player != w.Player || fmt.Sprint(g.ByName) != fmt.Sprint(w.ByName) {
			t.Errorf("conversation %d: replayed %d packets, %d bytes, %s, player %d, %v\nrecorded %d packets, %d bytes, %s, player %d, %v",
				i+1, g.Packets, g.Bytes, g.Era, g.Player, g.ByName, w.Packets, w.Bytes, w.Era, w.Player, w.ByName)
		}
		if g.Listen != "127.0.0.1:24785" || clients[g.Client] || servers[g.Server] {
			t.Errorf("conversation %d: client %s, server %s, listen %s: not apart", i+1, g.Client, g.Server, g.Listen)
		}
		clients[g.Client], servers[g.Server] = true, true
	}
	t.Logf("%s", repOut.String())
}

// realcapOrSample is the real modern/multi capture when present, else the
// bundled modern sample.
func realcapOrSample(t *testing.T) string {
	if p := filepath.Join(sharedCaptures, "modern/multi/multi.pcap"); fileExists(p) {
		return p
	}
	t.Log("real captures not available: replaying the bundled sample")
	return "sample:modern"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
