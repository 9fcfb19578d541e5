package tui

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/source"
)

// quietLive is a capture given as a live interface gone quiet: its
// datagrams, then nothing until the capture is ended.
type quietLive struct {
	engine.Source
	end <-chan struct{}
}

func (q quietLive) Next() (*source.Datagram, error) {
	d, err := q.Source.Next()
	if err == io.EOF {
		<-q.end
	}
	return d, err
}

// ctrl+e ends a live capture without quitting: the analysis finishes as
// at the end of a file, the status line says so, and the findings that
// need every state come; before, they are "so far".
func TestEndLiveCapture(t *testing.T) {
	in, err := engine.OpenInput("sample:modern")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	m := New(Options{Title: "live: lo", Live: "lo", Start: func(ctx context.Context, e *engine.Engine) error {
		return e.RunLive(context.Background(), quietLive{in.Reader, ctx.Done()}, 10*time.Millisecond, nil)
	}})
	defer m.Close()
	m.resize(160, 40)
	msgs := make(chan tea.Msg, 8)
	for _, c := range m.Init()().(tea.BatchMsg) {
		if c != nil {
			go func() { msgs <- c() }()
		}
	}
	for start := time.Now(); m.e.Progress().Packets < 761 || m.e.Progress().Rebuilt < 362; time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the live capture did not come in: %+v", m.e.Progress())
		}
	}
	drive(t, m, m.refreshAll(), "6") // a tick's refresh (a tick itself runs on while live)
	if s := screen(m); !strings.Contains(s, "so far") || strings.Contains(s, "capture ended") {
		t.Fatalf("live, before the capture ends: the findings are not said to be so far, or the capture is said to have ended:\n%s", s)
	}
	drive(t, m, "?")
	if s := screen(m); !strings.Contains(s, "end the capture") {
		t.Errorf("the help of a live capture does not list ctrl+e:\n%s", s)
	}
	drive(t, m, "?", tea.KeyPressMsg{Code: 'e', Mod: tea.ModCtrl})
	var done tea.Msg
	for done == nil {
		select {
		case msg := <-msgs:
			if _, ok := msg.(runDoneMsg); ok {
				done = msg
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the capture did not end 20 s after ctrl+e")
		}
	}
	drive(t, m, done)
	m.e.Wait()
	drive(t, m, tickMsg{}) // the last tick: everything is in
	s := screen(m)
	if strings.Contains(s, "so far") || !strings.Contains(s, "live lo: 761 packets (capture ended)") {
		t.Errorf("after ctrl+e: the findings are still so far, or the status does not say the capture ended:\n%s", s)
	}
}
