package main

import "github.com/spf13/cobra"

func newSynthCmd() *cobra.Command {
	return &cobra.Command{Use: "synth", Short: "Write a synthetic capture of a LAN game"}
}
