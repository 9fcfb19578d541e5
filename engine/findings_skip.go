package engine

import (
	"fmt"
	"time"

	"github.com/pmdump/pmdump/decode"
)

// The legacy client tells the server, in every sdak, how many frames it
// has skipped so far (it skips drawing frames to catch up when it falls
// behind) and which frame it is at: the frames it did not show, over the
// frames it ran, is what the player saw of the game's 40 a second.

// skipWindow is the window, in seconds, of the worst share skipped.
const skipWindow = 10

var sdakFrame = decode.MustRef("frame", "sdak")

// skips follows one client's skipped frames.
type skips struct {
	have            bool
	frame, skipped  int64 // the last sdak's
	frames, skip    int64 // over the game: frames run, frames skipped
	win             []skipSec
	first, last     evidence
	firstTS, lastTS time.Time
}

// skipSec is one window of skipWindow seconds.
type skipSec struct {
	sec          int64
	frames, skip int64
	n            int
	ts           time.Time
}

func (s *skips) sdak(frame, skipped int64, n int, ts time.Time) {
	if s.have && frame < s.frame && frame+decode.LevelRestartGap > s.frame {
		return // an sdak overtaken by a newer one
	}
	if !s.have || frame < s.frame || skipped < s.skipped {
		// The first sdak, or a new level (frames start again), or a
		// counter that went back (the client started again).
		s.have, s.frame, s.skipped = true, frame, skipped
		return
	}
	df, ds := frame-s.frame, skipped-s.skipped
	s.frame, s.skipped = frame, skipped
	if df == 0 && ds == 0 {
		return
	}
	if df > 100*GameFPS {
		return // a jump no client makes between two sdaks
	}
	s.frames += df
	s.skip += min(ds, df)
	if s.firstTS.IsZero() {
		s.firstTS = ts
	}
	s.lastTS = ts
	if ds > 0 {
		if s.first.first == 0 {
			s.first.add(n, ts, 0)
		}
		s.last.add(n, ts, 0)
	}
	sec := ts.Unix() / skipWindow
	if k := len(s.win); k > 0 && s.win[k-1].sec == sec {
		s.win[k-1].frames += df
		s.win[k-1].skip += min(ds, df)
		return
	}
	if len(s.win) < maxProbeSecs/skipWindow {
		s.win = append(s.win, skipSec{sec: sec, frames: df, skip: min(ds, df), n: n, ts: ts})
	}
}

// skipFinding reports a legacy client that skipped frames.
func (fc *findingCollector) skipFinding(w *convWatch) {
	s := &w.skip
	if s.skip == 0 || s.frames == 0 {
		return
	}
	share := float64(s.skip) / float64(s.frames)
	worst, at := 0.0, skipSec{}
	for _, x := range s.win {
		if x.frames >= skipWindow*GameFPS/2 {
			if r := float64(x.skip) / float64(x.frames); r > worst {
				worst, at = r, x
			}
		}
	}
	v := evidence{first: s.first.first, worst: s.first.first, last: s.last.last, start: s.firstTS, end: s.lastTS}
	if at.n != 0 {
		v.worst = at.n
	}
	f := fc.finding(w, KindSlowClient, SeverityInfo, v, "%s skipped %d of the %d frames it ran (%s: it showed %.1f frames a second of the server's %d)",
		w.who(), s.skip, s.frames, pct(share), float64(GameFPS)*(1-share), GameFPS)
	if worst > 0 {
		f.Summary += fmt.Sprintf(", %s in its worst %d s (from %.0f s)", pct(worst), skipWindow, at.ts.Sub(fc.t0).Seconds())
		f.Figures["worst_window_share"] = worst
	}
	f.Figures["frames"], f.Figures["skipped"], f.Figures["skipped_share"] = float64(s.frames), float64(s.skip), share
	f.Figures["shown_fps"] = float64(GameFPS) * (1 - share)
	fc.found(f)
}
