package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/captures"
)

// TestSamplesVerify rebuilds every bundled sample's states and checks each
// client's against the sample's ground truth (captures/NAME_cN_client_gt.csv,
// written by the generator, not by the rebuild): every row must match.
func TestSamplesVerify(t *testing.T) {
	for _, b := range captures.Bundle {
		base := strings.TrimSuffix(b.File, filepath.Ext(b.File))
		for n := 1; ; n++ {
			csvPath := filepath.Join("../../captures", fmt.Sprintf("%s_c%d_client_gt.csv", base, n))
			data, err := os.ReadFile(csvPath)
			if os.IsNotExist(err) {
				if n == 1 {
					t.Errorf("sample %s has no client ground truth (%s)", b.Name, csvPath)
				}
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil || len(rows) < 2 {
				t.Fatalf("%s: %d rows, %v", csvPath, len(rows), err)
			}
			t.Run(fmt.Sprintf("%s/c%d", b.Name, n), func(t *testing.T) {
				stdout, stderr, code := pmdump("states", "--verify", csvPath, "--player", fmt.Sprint(n), "sample:"+b.Name)
				want := fmt.Sprintf("%d rows: %d matched, 0 mismatched, 0 missing", len(rows)-1, len(rows)-1)
				if code != exitOK || !strings.Contains(stdout+stderr, want) {
					t.Errorf("exit %d, want %q in:\n%s%s", code, want, stdout, stderr)
				}
			})
		}
	}
}
