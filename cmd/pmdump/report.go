package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/engine"
	"github.com/pmdump/pmdump/report"
)

func newReportCmd() *cobra.Command {
	var out, eraFlag, schemaFile string
	c := &cobra.Command{
		Use:   "report [flags] FILE... -o REPORT.html",
		Short: "Write one self-contained HTML page that replays the game in 2D, with plots and findings",
		Long: `Report reads captures to the end, rebuilds every state, and writes one HTML
file that needs nothing else (every script, style and the data inline; it makes
no network request): a summary of the capture, the findings, the netgame health
of each client over time as zoomable plots with a shared time cursor, and a 2D
replay of the game drawn from the states each client acknowledged (the level's
blocks, players in their colors with names, enemies, items, lifts, shots), with
play/pause, speed, a scrubber marked with the findings, and any client's view,
two side by side. Keys: space plays and pauses, ←/→ step one state.

The page's data is a documented JSON contract, in
<script type="application/json" id="pmdump-report">: see the README.
Captures longer than 10 minutes are thinned (the README says how).`,
		Example: `  pmdump report game.pcap -o game.html
  pmdump report part1.pcap part2.pcap -o - | gzip > game.html.gz`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("-o FILE is required (- for standard output)")
			}
			era, err := decode.ParseVersion(eraFlag)
			if err != nil {
				return usageError{err}
			}
			user, err := loadSchema(schemaFile)
			if err != nil {
				return err
			}
			// The timeline and the replay of a long capture are large: keep
			// the heap near what is live rather than let it double.
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(reportMemory))
			col := report.NewCollector()
			col.Schema = user
			cfg := col.Configure(engine.Config{Era: era, Schema: user})
			e, runErr := drive(cmd.Context(), cmd.ErrOrStderr(), cfg, args, true)
			if e == nil {
				return runErr
			}
			defer e.Close()
			d := col.Data(e)
			if err := writeReportFile(cmd, out, d); err != nil {
				return err
			}
			return runErr
		},
	}
	f := c.Flags()
	f.StringVarP(&out, "output", "o", "", "write the page to `FILE` (- for standard output)")
	f.StringVar(&eraFlag, "era", "auto", eraHelp)
	f.StringVar(&schemaFile, "schema", "", "state layout `FILE` (JSON) for a state size the built-in schemas do not know")
	return c
}

// writeReportFile writes the page to path ("-": standard output), through a
// temporary file renamed at the end so a failed run leaves no half page.
func writeReportFile(cmd *cobra.Command, path string, d *report.Data) error {
	if path == "-" {
		return report.Write(cmd.OutOrStdout(), d)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".pmdump-report-*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := report.Write(tmp, d); err != nil {
		tmp.Close()
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if isTerminal(cmd.ErrOrStderr()) {
		st, _ := os.Stat(path)
		if st != nil {
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (%.1f MB)\n", path, float64(st.Size())/1e6)
		}
	}
	return nil
}

// reportMemory is the soft memory limit of report: the timeline of a
// one-hour 8-player game and its replay's samples hold about 400 MB, and a
// lower limit would make the garbage collector run all the time.
const reportMemory = 640 << 20
