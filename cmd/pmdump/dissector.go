package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/wireshark"
)

func newDissectorCmd() *cobra.Command {
	var out string
	c := &cobra.Command{
		Use:   "dissector [-o FILE]",
		Short: "Write a Wireshark Lua dissector for the game's packets",
		Long: `Dissector writes a Wireshark dissector (Lua plugin, protocol pmnet) generated
from pmdump's packet tables, for Wireshark 4.0 and newer: every packet of both
eras with every field, named pmnet.<packet>.<field> (the packet name in lower
case, the field as pmdump --json names it), plus pmnet.type, pmnet.era,
pmnet.dir and pmnet.player. Game packets are recognised by name and layout on
any UDP port (heuristic dissector) and UDP port 24785 is registered for
"Decode As". The era is inferred per conversation as pmdump does; the Info
column shows what pmdump read prints; stdf pieces are reassembled
(pmnet.dif.compressed, pmnet.dif.inflated).

Install it as a personal plugin:
  mkdir -p ~/.local/lib/wireshark/plugins
  pmdump dissector -o ~/.local/lib/wireshark/plugins/pmnet.lua`,
		Example: `  pmdump dissector -o pmnet.lua
  tshark -X lua_script:pmnet.lua -r game.pcap -Y 'pmnet.serr.c_sync < -5'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDissector(cmd, out)
		},
	}
	c.Flags().StringVarP(&out, "output", "o", "", "write the dissector to `FILE` (default: standard output)")
	return c
}

// version is the pmdump version named in generated files: the module
// version, or the VCS revision of a build from a clone.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(devel)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	if v == "(devel)" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " " + s.Value[:12]
			}
		}
	}
	return v
}

func runDissector(cmd *cobra.Command, out string) error {
	if out == "" {
		w := bufio.NewWriter(cmd.OutOrStdout())
		if err := wireshark.Write(w, version()); err != nil {
			return fmt.Errorf("dissector: %w", err)
		}
		return w.Flush()
	}
	f, err := os.Create(out)
	if err != nil {
		return usagef("-o: %v", err)
	}
	w := bufio.NewWriter(f)
	err = wireshark.Write(w, version())
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dissector: writing %s: %w", out, err)
	}
	return nil
}
