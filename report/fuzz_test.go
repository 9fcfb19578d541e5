package report_test

import (
	"testing"

	"github.com/pmdump/pmdump/report"
)

// FuzzRead reads the data of any page: an error or data, never a panic.
func FuzzRead(f *testing.F) {
	f.Add([]byte(`<script type="application/json" id="pmdump-report">
{"version":1,"conversations":[{"id":1,"replay":{"slsn":[0],"frame":[5],"t":[0.5],"players":{"0":{"x":[1.5],"y":[null]}}}}],"findings":[]}
</script>`))
	f.Add([]byte(`<script type="application/json" id="pmdump-report">{"version":2}</script>`))
	f.Add([]byte(`<script type="application/json" id="pmdump-report">{"conversations":[{"health":{"ack_ms":[1,null,"x"]}}]`))
	f.Add([]byte(`<html></html>`))
	f.Fuzz(func(t *testing.T, page []byte) {
		d, err := report.Read(page)
		if err == nil && d == nil {
			t.Fatal("no data and no error")
		}
	})
}
