#!/usr/bin/env bash
# Measures the engine's two speeds as the TUI runs it (index, timeline,
# health, the state rebuild behind the fast pass): when the fast pass ends
# (the whole packet list, filters and G work from then on), when the first
# client's states are all rebuilt, and when every state is; with GOMAXPROCS
# 1 and 2 (the rebuild's scaling), with the CPU time of the whole run; and
# pmdump states' wall and CPU time beside them.
# On the real modern/multi capture appended 20 times (286,520 packets), or
# on the capture given (the one-hour game of pmdump synth, say).
#
#   scripts/two-speeds.sh [CAPTURE]
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pmdump" ./cmd/pmdump
go test -c -o "$work/engine.test" ./engine/
cap=${1:-}
if [ -z "$cap" ]; then
	src=../shared/captures/modern/multi/multi.pcap
	if [ ! -f "$src" ]; then
		echo "skip: $src not found (the real captures live in ../shared)" >&2
		exit 0
	fi
	cap=$work/big.pcap
	{ cat "$src"; for _ in $(seq 2 20); do tail -c +25 "$src"; done; } >"$cap"
fi
echo "capture: $cap ($(du -h "$cap" | cut -f1)); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for procs in 2 1; do
	echo "GOMAXPROCS=$procs:"
	(cd engine && GOMAXPROCS=$procs PMDUMP_BENCH_CAPTURE="$cap" /usr/bin/time -o "$work/time" -f '%U s user, %S s sys' \
		"$work/engine.test" -test.run '^$' -test.bench TwoSpeeds -test.benchtime 1x) |
		grep -o '[0-9.]* [a-z0-9-]*-s\|[0-9]* states' | tr '\n' ' '
	echo "($(cat "$work/time"))"
	/usr/bin/time -f "  pmdump states: %e s wall, %U s user, %S s sys, %M KB peak RSS" env GOMAXPROCS=$procs "$work/pmdump" states "$cap" >/dev/null
done
