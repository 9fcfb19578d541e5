#!/usr/bin/env bash
# Measures G in the terminal UI itself, as a user sees it (see
# scripts/tuispeed): pmdump tui in a tmux window of 160×48, G pressed 0.3 s
# after the start, the time until the screen shows the capture's last
# packet, the time until the status line says "read:", the peak RSS; RUNS
# runs (default 5) and their medians. OLD=path/to/pmdump measures another
# binary too, alternated with this one's. Needs tmux.
#
#   scripts/tui-speed.sh CAPTURE
#   RUNS=7 OLD=/tmp/pmdump-before scripts/tui-speed.sh /tmp/hour.pcap
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
	echo "usage: $0 CAPTURE (pmdump synth -o hour.pcap --players 7 --duration 1h --era modern --seed 7, say)" >&2
	exit 2
fi
if ! command -v tmux >/dev/null; then
	echo "skip: tmux is not installed" >&2
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pmdump" ./cmd/pmdump
go build -o "$work/tuispeed" ./scripts/tuispeed
args=(-bin "$work/pmdump" -runs "${RUNS:-5}")
if [ -n "${OLD:-}" ]; then args+=(-old "$OLD"); fi
"$work/tuispeed" "${args[@]}" "$1"
