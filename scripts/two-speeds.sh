#!/usr/bin/env bash
# Measures the engine's two speeds as the TUI runs it (index, timeline,
# health, findings, the state rebuild behind the fast pass): when the fast
# pass ends (the whole packet list, filters and G work from then on: read),
# when every state of the client of the last packet, asked for first as G in
# the TUI does, is rebuilt (cursor), when the first client's states are
# (line1), and when every state is (rebuilt); with GOMAXPROCS 2 and 1, and the
# rebuild's scaling: its own wall time (rebuilt - read: for a file the
# rebuild starts when the fast pass ends) with 2 against 1. Each figure is
# the median of RUNS runs (default 3; alternated between the GOMAXPROCS
# tried), with the CPU time and peak RSS of the
# whole run beside it, and pmdump read and pmdump states of the same
# capture for comparison; the load average each ran under is printed.
# On the real modern/multi capture appended 20 times (286,520 packets), or
# on the capture given (the one-hour game of pmdump synth, say). FAST=1
# measures the fast pass alone (G in the TUI); PROCS="2" limits the
# GOMAXPROCS tried.
#
#   scripts/two-speeds.sh [CAPTURE]
#   FAST=1 PROCS=2 RUNS=5 scripts/two-speeds.sh /tmp/hour.pcap
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
runs=${RUNS:-3}
fast=
if [ -n "${FAST:-}" ]; then fast=1; fi
echo "capture: $cap ($(du -h "$cap" | cut -f1)); $runs runs each, medians; load average: $(cut -d' ' -f1-3 /proc/loadavg)"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The runs alternate between the GOMAXPROCS tried, so that a change in the
# machine's load weighs on each alike.
for procs in ${PROCS:-2 1}; do : >"$work/runs.$procs"; done
for _ in $(seq "$runs"); do
	for procs in ${PROCS:-2 1}; do
		(cd engine && GOMAXPROCS=$procs PMDUMP_BENCH_CAPTURE="$cap" PMDUMP_BENCH_FAST_ONLY=$fast /usr/bin/time -o "$work/time" \
			-f "%e %U %S %M" "$work/engine.test" -test.run '^$' -test.bench TwoSpeeds -test.benchtime 1x) >"$work/out"
		m() { # the metric, or NA when the run has none (FAST=1)
			local v
			v=$(grep -o "[0-9.]* $1" "$work/out" | cut -d' ' -f1 || true)
			echo "${v:-NA}"
		}
		echo "$(m read-s) $(m cursor-s) $(m line1-s) $(m rebuilt-s) $(m states) $(cat "$work/time")" >>"$work/runs.$procs"
	done
done
declare -A rebuild
for procs in ${PROCS:-2 1}; do
	echo "GOMAXPROCS=$procs (load average now $(cut -d' ' -f1-3 /proc/loadavg)):"
	/usr/bin/time -f "  pmdump read: %e s wall, %U s user, %S s sys, %M KB peak RSS" env GOMAXPROCS=$procs "$work/pmdump" read "$cap" >/dev/null
	col() { awk -v c="$1" '$c != "NA" { print $c }' "$work/runs.$procs" | median; }
	read_s=$(col 1)
	if [ -n "$fast" ]; then
		echo "  engine as the TUI runs it: fast pass $read_s s"
	else
		own=$(awk '{ print $4 - $1 }' "$work/runs.$procs" | median)
		rebuild[$procs]=$own
		echo "  engine as the TUI runs it: fast pass $read_s s; cursor's client $(col 2) s; first client $(col 3) s; every state $(col 4) s ($(col 5) states; the rebuild's own $own s)"
	fi
	echo "  (whole run: $(col 6) s wall, $(col 7) s user, $(col 8) s sys, $(col 9) KB peak RSS)"
	if [ -z "$fast" ]; then
		/usr/bin/time -f "  pmdump states: %e s wall, %U s user, %S s sys, %M KB peak RSS" env GOMAXPROCS=$procs "$work/pmdump" states "$cap" >/dev/null
	fi
done
if [ -n "${rebuild[1]:-}" ] && [ -n "${rebuild[2]:-}" ]; then
	awk -v a="${rebuild[2]}" -v b="${rebuild[1]}" 'BEGIN { printf "the rebuild with GOMAXPROCS=2 takes %.2fx its time with 1 (target <= 0.6x)\n", a / b }'
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
