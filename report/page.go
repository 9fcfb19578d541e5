package report

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strings"
)

//go:embed assets/uplot/uPlot.iife.min.js assets/uplot/uPlot.min.css assets/report.js assets/report.css
var assets embed.FS

func asset(name string) string {
	b, err := assets.ReadFile("assets/" + name)
	if err != nil {
		panic(fmt.Sprintf("report: embedded asset %s: %v", name, err)) // the build embeds them
	}
	return string(b)
}

// Write writes the report page: one HTML file with every script and style
// inline and the data as JSON in <script type="application/json"
// id="pmdump-report">. The page makes no network request.
func Write(w io.Writer, d *Data) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	title := "pmdump report"
	if len(d.Summary.Inputs) > 0 {
		title += ": " + strings.Join(d.Summary.Inputs, ", ")
	}
	fmt.Fprintf(bw, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="pmdump report, data version %d">
<link rel="icon" href="data:,">
<title>%s</title>
<style>%s</style>
<style>%s</style>
</head>
<body>
`, d.Version, html.EscapeString(title), asset("uplot/uPlot.min.css"), asset("report.css"))
	bw.WriteString(body)
	fmt.Fprintf(bw, "<script type=\"application/json\" id=\"%s\">\n", ElementID) // the JSON on a line of its own
	enc := json.NewEncoder(bw)                                                   // escapes <, > and & in strings: the data cannot end the element
	if err := enc.Encode(d); err != nil {
		return fmt.Errorf("report data: %w", err)
	}
	bw.WriteString("</script>\n<script>")
	bw.WriteString(scriptSafe(asset("uplot/uPlot.iife.min.js")))
	bw.WriteString("</script>\n<script>")
	bw.WriteString(scriptSafe(asset("report.js")))
	bw.WriteString("</script>\n</body>\n</html>\n")
	return bw.Flush()
}

// scriptSafe keeps an inline script from ending its element early.
func scriptSafe(js string) string {
	return strings.ReplaceAll(js, "</script", `<\/script`)
}

// body is the page's skeleton; report.js fills it from the data.
const body = `<header>
 <h1>pmdump report</h1>
 <div id="summary-line" class="muted">reading the report data…</div>
</header>
<main>
 <section id="replay-pane" aria-label="2D replay">
  <div id="views">
   <figure class="view"><canvas id="view-a" width="600" height="600"></canvas><figcaption id="cap-a"></figcaption></figure>
   <figure class="view hidden" id="view-b-fig"><canvas id="view-b" width="600" height="600"></canvas><figcaption id="cap-b"></figcaption></figure>
  </div>
  <div id="controls">
   <button id="play" title="play / pause (space)">▶</button>
   <label>speed <select id="speed"><option>0.25</option><option>0.5</option><option selected>1</option><option>2</option><option>4</option><option>8</option><option>16</option><option>64</option></select></label>
   <label>view <select id="sel-a"></select></label>
   <label>beside <select id="sel-b"><option value="">none</option></select></label>
   <span id="clock" class="mono"></span>
  </div>
  <div id="scrub-wrap"><div id="marks"></div><input id="scrubber" type="range" min="0" max="1" step="0.001" value="0" aria-label="time"></div>
 </section>
 <section id="side-pane">
  <h2>Findings <span id="finding-count" class="muted"></span></h2>
  <ol id="findings"></ol>
  <h2>Capture</h2>
  <div id="summary"></div>
 </section>
</main>
<section id="plots-pane">
 <h2>Health over time <span class="muted">(drag to zoom, double-click to reset, click to move the replay)</span></h2>
 <div id="plots"></div>
</section>
`
