package drive

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/pmdump/pmdump/session"
)

// The games of a capture: the conversations of one run of one server.

// serverTrack follows one server listening address: the newest state it
// sent, and how many times its frames started again (a restarted server:
// another game).
type serverTrack struct {
	newest Key
	sent   bool
	gen    int
}

func (t *serverTrack) game(key string) string {
	if t.gen == 0 {
		return "server " + key
	}
	return fmt.Sprintf("server %s, game %d", key, t.gen+1)
}

// restartSlack is how many frames before the newest state a join reply
// may name in the same run of a server.
const restartSlack = 5

// serverKey names the server of a conversation: its listening address,
// else its host.
func serverKey(c *session.Conversation) string {
	if c.Listen.IsValid() {
		return c.Listen.String()
	}
	return c.Server.Addr().String()
}

// pickGame returns the conversations of one game: those of one run of one
// server.
func pickGame(convs map[int]*session.Conversation, gameOf map[int]string, want int) (map[int]bool, error) {
	games := map[string]map[int]bool{}
	for id := range convs {
		k := gameOf[id]
		if games[k] == nil {
			games[k] = map[int]bool{}
		}
		games[k][id] = true
	}
	if want != 0 {
		k, ok := gameOf[want]
		if !ok {
			return nil, fmt.Errorf("drive: no conversation %d in the capture", want)
		}
		return games[k], nil
	}
	switch len(games) {
	case 0:
		return nil, errors.New("drive: no game conversation in the capture")
	case 1:
		for _, g := range games {
			return g, nil
		}
	}
	var names []string
	for k, g := range games {
		ids := slices.Sorted(maps.Keys(g))
		names = append(names, fmt.Sprintf("%s: conversations %v", k, ids))
	}
	sort.Strings(names)
	return nil, fmt.Errorf("drive: the capture holds %d games; pick one with --conv:\n  %s", len(games), strings.Join(names, "\n  "))
}
