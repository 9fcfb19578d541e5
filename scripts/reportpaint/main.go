// Command reportpaint opens a pmdump report page in headless Chromium and
// prints when it first painted and when it was ready (its data parsed, the
// replay and the plots drawn), as the browser's own performance timeline
// says, with any console error or network request. Used by
// report-speed.sh.
//
//	go run ./scripts/reportpaint [-png FILE] game.html
//
// -png also saves a screenshot of the page at 1366×768.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

func main() {
	png := flag.String("png", "", "save a screenshot to `FILE`")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: reportpaint [-png FILE] PAGE.html")
		os.Exit(1)
	}
	if err := run(flag.Arg(0), *png); err != nil {
		fmt.Fprintln(os.Stderr, "reportpaint:", err)
		os.Exit(1)
	}
}

func run(page, png string) error {
	abs, err := filepath.Abs(page)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "reportpaint-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	actx, acancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath("/usr/bin/chromium"), chromedp.UserDataDir(dir),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1366, 768))
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx); err != nil { // start the browser before timing
		return err
	}
	url := "file://" + abs
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				problems = append(problems, "console error")
			}
		case *network.EventRequestWillBeSent:
			if ev.Request.URL != url {
				problems = append(problems, "request: "+ev.Request.URL)
			}
		}
	}); err != nil {
		return err
	}
	start := time.Now()
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return err
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("window.pmdumpReport !== undefined", chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		return err
	}
	wall := time.Since(start)
	paint, err := chromedp.Run(ctx, chromedp.Evaluate[map[string]float64](`(function () {
		var o = {};
		performance.getEntriesByType("paint").forEach(function (e) { o[e.name] = e.startTime; });
		var n = performance.getEntriesByType("navigation")[0];
		if (n) { o["dom-content-loaded"] = n.domContentLoadedEventEnd; o["load"] = n.loadEventEnd; }
		return o;
	})()`))
	if err != nil {
		return err
	}
	st, _ := os.Stat(abs)
	fmt.Printf("%s: %.1f MB\n", page, float64(st.Size())/1e6)
	for _, k := range []string{"first-paint", "first-contentful-paint", "dom-content-loaded", "load"} {
		fmt.Printf("  %-24s %6.0f ms\n", k, paint[k])
	}
	fmt.Printf("  %-24s %6.0f ms (wall clock, navigation to the page's API)\n", "ready", float64(wall.Milliseconds()))
	if png != "" {
		b, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			return err
		}
		if err := os.WriteFile(png, b, 0o644); err != nil {
			return err
		}
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("  %d console errors or requests\n", len(problems))
	for _, p := range problems {
		fmt.Println("   ", p)
	}
	return nil
}
