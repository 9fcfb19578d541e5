package report_test

import (
	"bytes"
	"context"
	"fmt"

	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/report"
)

// A report is the data a Collector gathers while an engine runs, written
// as one HTML page; Read takes the data back out of a page.
func Example() {
	c := report.NewCollector()
	e := engine.New(c.Configure(engine.Config{}))
	if err := e.Run(context.Background(), "sample:modern"); err != nil {
		fmt.Println(err)
		return
	}
	defer e.Close()
	var page bytes.Buffer
	if err := report.Write(&page, c.Data(e)); err != nil {
		fmt.Println(err)
		return
	}
	d, err := report.Read(page.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, cv := range d.Conversations {
		k := len(cv.Replay.T) - 1
		p := cv.Replay.Players[fmt.Sprint(*cv.Player)]
		fmt.Printf("conversation %d, player %d: %d states held; the last, frame %d of level sequence %d, has the player at %v,%v\n",
			cv.ID, *cv.Player, cv.Acked, cv.Replay.Frame[k], cv.Replay.SLSN[k], p.X.V[k], p.Y.V[k])
	}
	// Output:
	// conversation 1, player 1: 140 states held; the last, frame 100 of level sequence 1, has the player at 471.25,1935.800048828125
	// conversation 2, player 2: 133 states held; the last, frame 99 of level sequence 1, has the player at 705.75,1960
}
