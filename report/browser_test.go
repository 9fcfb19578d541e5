package report_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/pmdump/pmdump/internal/realcap"
	"github.com/pmdump/pmdump/report"
)

// chromium is Debian's headless browser; the browser tests skip without it.
const chromium = "/usr/bin/chromium"

// The one browser of the package's tests, started by the first test that
// needs it and ended by TestMain.
var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserCancel = func() {}
	browserErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	browserCancel()
	os.Exit(code)
}

// browser returns the shared browser's context, skipping the test when
// chromium is not installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium
	if _, err := os.Stat(path); err != nil {
		if p, err := exec.LookPath("chromium"); err == nil {
			path = p
		} else {
			t.Skipf("chromium is not installed (%s): skipping the browser test", chromium)
		}
	}
	browserOnce.Do(func() {
		dir, err := os.MkdirTemp("", "pmdump-chromium-")
		if err != nil {
			browserErr = err
			return
		}
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(path),
			chromedp.UserDataDir(dir),
			chromedp.Flag("headless", true),
			chromedp.Flag("no-sandbox", true),
			chromedp.Flag("disable-gpu", true),
			chromedp.Flag("disable-quic", true),
			chromedp.Flag("no-first-run", true),
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.WindowSize(1366, 768),
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Do(bctx); err != nil {
			browserErr = fmt.Errorf("start %s: %w", path, err)
		}
		browserCtx = bctx
		browserCancel = func() { bcancel(); acancel(); os.RemoveAll(dir) }
	})
	if browserErr != nil {
		t.Fatalf("browser: %v", browserErr)
	}
	return browserCtx
}

// tab is one page open in the browser, with what it logged and requested.
type tab struct {
	ctx      context.Context
	url      string
	mu       sync.Mutex
	errors   []string
	requests []string
}

// open writes the report of d to a file and opens it in a new tab of the
// shared browser, at the given viewport.
func open(t *testing.T, d *report.Data, w, h int64) *tab {
	t.Helper()
	bctx := browser(t)
	var buf bytes.Buffer
	if err := report.Write(&buf, d); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := chromedp.NewContext(bctx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	tb := &tab{ctx: ctx, url: "file://" + file}
	err := chromedp.Listen(ctx, func(ev any) {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		switch ev := ev.(type) {
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				tb.errors = append(tb.errors, "log: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				tb.errors = append(tb.errors, "console."+string(ev.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			msg := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				msg += " " + ev.ExceptionDetails.Exception.Description
			}
			tb.errors = append(tb.errors, "exception: "+msg)
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != tb.url {
				tb.requests = append(tb.requests, ev.Request.URL)
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.EmulateViewport(w, h),
		chromedp.Navigate(tb.url),
	)
	if err == nil {
		_, err = chromedp.Run(ctx, chromedp.Poll[bool]("window.pmdumpReport !== undefined", chromedp.WithPollingTimeout(30*time.Second)))
	}
	if err != nil {
		t.Fatalf("open %s: %v (errors: %v)", file, err, tb.errors)
	}
	return tb
}

// clean fails the test on any console error, exception or request.
func (tb *tab) clean(t *testing.T) {
	t.Helper()
	tb.mu.Lock()
	defer tb.mu.Unlock()
	if len(tb.errors) > 0 {
		t.Errorf("console errors: %q", tb.errors)
	}
	if len(tb.requests) > 0 {
		t.Errorf("network requests: %q", tb.requests)
	}
}

// TestBrowserRealCaptures opens the report of every real capture (and of
// both samples) in Chromium: no console error, no request of any kind, and
// the page shows every conversation and a plot per health figure.
func TestBrowserRealCaptures(t *testing.T) {
	t.Parallel()
	// A pcap with no packet at all: the page says there is no game.
	empty := filepath.Join(t.TempDir(), "empty.pcap")
	hdr := []byte{0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 1, 0, 0, 0}
	if err := os.WriteFile(empty, hdr, 0o644); err != nil {
		t.Fatal(err)
	}
	inputs := []string{"sample:legacy", "sample:modern", empty}
	for _, rel := range realCaptures {
		inputs = append(inputs, realcap.Path(t, rel))
	}
	for _, in := range inputs {
		t.Run(filepath.Base(filepath.Dir(in))+"/"+filepath.Base(in), func(t *testing.T) {
			t.Parallel()
			b := build(t, in)
			tb := open(t, b.d, 1366, 768)
			rows := eval[int](t, tb, `document.querySelectorAll("#summary tr").length - 1`)
			plots := eval[int](t, tb, `document.querySelectorAll("#plots .uplot").length`)
			if rows != len(b.d.Conversations) {
				t.Errorf("the summary shows %d conversations, the data has %d", rows, len(b.d.Conversations))
			}
			if len(b.d.Conversations) == 0 {
				if c := eval[string](t, tb, `document.getElementById("cap-a").textContent`); !strings.Contains(c, "no game") {
					t.Errorf("the page of a capture with no game says %q", c)
				}
			} else if plots < 3 {
				t.Errorf("%d plots drawn", plots)
			}
			tb.clean(t)
		})
	}
}

// TestBrowserReplayDrawsPlayers seeks the replay to a chosen state and
// checks, pixel by pixel, that the canvas shows each player where the
// state puts it, in its color.
func TestBrowserReplayDrawsPlayers(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"modern/multi/multi.pcap", "legacy/lossy/capture.pcap"} {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			b := build(t, realcap.Path(t, rel))
			cv, k, players := chooseEntry(t, b.d)
			tb := open(t, b.d, 1366, 768)
			eval[int](t, tb, fmt.Sprintf(`pmdumpReport.view(%d, 0); pmdumpReport.seek(%v); 0`, cv.ID, cv.Replay.T[k]))
			canvasW := eval[float64](t, tb, `document.getElementById("view-a").width`)
			canvasH := eval[float64](t, tb, `document.getElementById("view-a").height`)
			entry := eval[int](t, tb, fmt.Sprintf(`pmdumpReport.entry(%d)`, cv.ID))
			palette := eval[[]string](t, tb, `pmdumpReport.palette`)
			if entry != k {
				t.Fatalf("at t=%v the page shows entry %d of conversation %d, want %d", cv.Replay.T[k], entry, cv.ID, k)
			}
			lv := b.d.Levels[cv.Levels[strconv.Itoa(cv.Replay.SLSN[k])]]
			sx, sy := canvasW/float64(lv.W*lv.Block), canvasH/float64(lv.H*lv.Block)
			for _, p := range players {
				tr := cv.Replay.Players[p]
				// The middle of the player's 20-pixel sprite, in canvas pixels.
				px, py := int(math.Round((tr.X.V[k]+10)*sx)), int(math.Round((tr.Y.V[k]+10)*sy))
				rgb := eval[[]int](t, tb, fmt.Sprintf(`Array.from(document.getElementById("view-a").getContext("2d").getImageData(%d, %d, 1, 1).data)`, px, py))
				want := palette[cv.Colors[p]%16]
				got := fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
				if got != want {
					t.Errorf("player %s at %v,%v (canvas %d,%d): pixel %s, want its color %d %s", p, tr.X.V[k], tr.Y.V[k], px, py, got, cv.Colors[p], want)
				}
			}
			tb.clean(t)
		})
	}
}

// chooseEntry picks a conversation and a replay entry in the middle of its
// replay with the active players that stand apart (no other player within
// 60 pixels, so no other sprite or name covers them).
func chooseEntry(t *testing.T, d *report.Data) (report.Conversation, int, []string) {
	t.Helper()
	for _, cv := range d.Conversations {
		n := len(cv.Replay.T)
		for k := n / 2; k < n; k++ {
			var apart []string
			for p, tr := range cv.Replay.Players {
				x, y := tr.X.V[k], tr.Y.V[k]
				if math.IsNaN(x) || x >= 990 { // not active, or not yet placed
					continue
				}
				ok := true
				for q, o := range cv.Replay.Players {
					if q != p && !math.IsNaN(o.X.V[k]) && math.Abs(o.X.V[k]-x) < 60 && math.Abs(o.Y.V[k]-y) < 60 {
						ok = false
					}
				}
				if ok {
					apart = append(apart, p)
				}
			}
			if len(apart) > 0 {
				return cv, k, apart
			}
		}
	}
	t.Fatal("no state with a player standing apart")
	return report.Conversation{}, 0, nil
}

// TestBrowserFindingMovesScrubber clicks a finding: the scrubber, the
// replay and the plots go to its time.
func TestBrowserFindingMovesScrubber(t *testing.T) {
	t.Parallel()
	b := build(t, realcap.Path(t, "modern/basic/basic.pcap"))
	d := *b.d
	d.Findings = []report.Finding{
		{Kind: "loss", Severity: "warning", Start: 12.25, End: 14, Conv: 1, Player: 1, Summary: "player 1 lost 4 difs"},
		{Kind: "desync", Severity: "error", Start: 41.5, End: 41.5, Conv: 1, Player: 1, Summary: "player 1 out of sync"},
		{Kind: "join", Severity: "info", Start: 0.2, End: 0.2, Player: -1, Summary: "a player joined"},
	}
	tb := open(t, &d, 1366, 768)
	marks := eval[int](t, tb, `document.querySelectorAll("#marks span").length`)
	if err := chromedp.Do(tb.ctx, chromedp.Click(chromedp.CSS(`#findings li.error`))); err != nil {
		t.Fatal(err)
	}
	scrub, err := chromedp.Run(tb.ctx, chromedp.Value(chromedp.ID("scrubber")))
	if err != nil {
		t.Fatal(err)
	}
	now := eval[float64](t, tb, `pmdumpReport.time()`)
	ranges := eval[[][2]float64](t, tb, `pmdumpReport.plotRanges()`)
	if marks != len(d.Findings) {
		t.Errorf("%d marks on the scrubber, want %d", marks, len(d.Findings))
	}
	v, err := strconv.ParseFloat(scrub, 64)
	if err != nil || math.Abs(v-41.5) > 0.01 || now != 41.5 {
		t.Errorf("after clicking the finding at 41.5 s the scrubber is at %q and the replay at %v", scrub, now)
	}
	if len(ranges) == 0 {
		t.Error("no plots")
	}
	for i, r := range ranges {
		if r[0] > 41.5 || r[1] < 41.5 || r[1]-r[0] >= d.Summary.Duration {
			t.Errorf("plot %d shows %v s to %v s, want a zoom around 41.5 s", i, r[0], r[1])
		}
	}
	caption := eval[string](t, tb, `document.getElementById("cap-a").textContent`)
	k := -1
	for i, x := range d.Conversations[0].Replay.T {
		if x <= 41.5 {
			k = i
		}
	}
	want := fmt.Sprintf("frame %d ", d.Conversations[0].Replay.Frame[k])
	if !strings.Contains(caption, want) {
		t.Errorf("the view says %q, want the state of %q", caption, want)
	}
	// Keyboard: → steps to the next state of the view.
	if err := chromedp.Do(tb.ctx, chromedp.KeyEvent(kb.ArrowRight)); err != nil {
		t.Fatal(err)
	}
	now = eval[float64](t, tb, `pmdumpReport.time()`)
	if next := d.Conversations[0].Replay.T[k+1]; now != next {
		t.Errorf("→ moved the replay to %v s, want the next state's %v s", now, next)
	}
	// Space plays, and again pauses.
	if err := chromedp.Do(tb.ctx, chromedp.KeyEvent(" "), chromedp.Sleep(300*time.Millisecond), chromedp.KeyEvent(" ")); err != nil {
		t.Fatal(err)
	}
	played := eval[float64](t, tb, `pmdumpReport.time()`)
	time.Sleep(100 * time.Millisecond)
	if later := eval[float64](t, tb, `pmdumpReport.time()`); played <= now || later != played {
		t.Errorf("space, 300 ms, space: the replay went from %v s to %v s, then to %v s while paused", now, played, later)
	}
	tb.clean(t)
}

// TestScreenshot writes the README's screenshots when
// PMDUMP_REPORT_SCREENSHOT names a folder.
func TestScreenshot(t *testing.T) {
	dir := os.Getenv("PMDUMP_REPORT_SCREENSHOT")
	if dir == "" {
		t.Skip("PMDUMP_REPORT_SCREENSHOT is not set: no screenshot")
	}
	// The real lossy capture with the doctor's own findings, at the first
	// dif player 1 lost whole.
	b := build(t, realcap.Path(t, "legacy/lossy/capture.pcap"))
	d := *b.d
	at := -1.0
	for _, f := range d.Findings {
		if f.Kind == "loss" && f.Conv == 1 {
			at = f.Start
		}
	}
	if at < 0 {
		t.Fatal("no loss finding for conversation 1")
	}
	for _, size := range [][2]int64{{1366, 768}, {2560, 1440}} {
		tb := open(t, &d, size[0], size[1])
		eval[int](t, tb, fmt.Sprintf(`pmdumpReport.view(1, 2); pmdumpReport.seek(%g); 0`, at))
		png, err := chromedp.Run(tb.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join(dir, fmt.Sprintf("report-%dx%d.png", size[0], size[1]))
		if err := os.WriteFile(name, png, 0o644); err != nil {
			t.Fatal(err)
		}
		tb.clean(t)
	}
}

// eval evaluates a JavaScript expression in the tab.
func eval[T any](t *testing.T, tb *tab, js string) T {
	t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}
