#!/usr/bin/env bash
# Measures the engine's two speeds as the TUI runs it (index, timeline,
# health, the state rebuild behind the fast pass): when the fast pass ends
# (the whole packet list, filters and G work from then on), when the first
# client's states are all rebuilt, and when every state is; with GOMAXPROCS
# 1 and 2 (the rebuild's scaling), with the CPU time of the whole run; and
# pmdump states' wall and CPU time beside them.
# On the real modern/multi capture appended 20 times (286,520 packets), or
# on the capture given (the one-hour game of pmdump synth, say). Each run
# says its CPU time (user + sys) and peak RSS beside its wall time, with
# pmdump read of the same capture right before it for comparison, and the
# load average it ran under. FAST=1 measures the fast pass alone (G in the
# TUI); PROCS="2" limits the GOMAXPROCS tried.
#
#   scripts/two-speeds.sh [CAPTURE]
#   FAST=1 PROCS=2 scripts/two-speeds.sh /tmp/hour.pcap
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
fast=
if [ -n "${FAST:-}" ]; then fast=1; fi
for procs in ${PROCS:-2 1}; do
	echo "GOMAXPROCS=$procs (load average $(cut -d' ' -f1-3 /proc/loadavg)):"
	/usr/bin/time -f "  pmdump read: %e s wall, %U s user, %S s sys, %M KB peak RSS" env GOMAXPROCS=$procs "$work/pmdump" read "$cap" >/dev/null
	(cd engine && GOMAXPROCS=$procs PMDUMP_BENCH_CAPTURE="$cap" PMDUMP_BENCH_FAST_ONLY=$fast /usr/bin/time -o "$work/time" \
		-f "%e s wall, %U s user, %S s sys, %M KB peak RSS" "$work/engine.test" -test.run '^$' -test.bench TwoSpeeds -test.benchtime 1x) |
		grep -o '[0-9.]* [a-z0-9-]*-s\|[0-9]* states' | tr '\n' ' ' | sed 's/^/  engine as the TUI runs it: /'
	echo "($(cat "$work/time"))"
	if [ -z "$fast" ]; then
		/usr/bin/time -f "  pmdump states: %e s wall, %U s user, %S s sys, %M KB peak RSS" env GOMAXPROCS=$procs "$work/pmdump" states "$cap" >/dev/null
	fi
done
