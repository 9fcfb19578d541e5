#!/usr/bin/env bash
# Times "pmdump states" (reassemble, inflate, rebuild and hash every state)
# on the real modern/multi capture against C zlib merely inflating the same
# 7449 difs with uncompress() on one core. Target: pmdump within 1.5x.
# Needs a C compiler and zlib's headers (Debian: zlib1g-dev); skips without.
#
#   scripts/compare-zlib.sh [CAPTURE] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
capture=${1:-../shared/captures/modern/multi/multi.pcap}
runs=${2:-5}
if [ ! -f "$capture" ]; then
	echo "skip: $capture not found" >&2
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! cc -O2 -o "$work/inflate" scripts/inflate-c/inflate.c -lz 2>/dev/null; then
	echo "skip: cannot build the C zlib program (install a C compiler and zlib1g-dev)" >&2
	exit 0
fi
go build -o "$work/pmdump" ./cmd/pmdump
go run ./scripts/difdump "$capture" "$work/difs"
best_c="" best_pm=""
for _ in $(seq "$runs"); do
	c=$("$work/inflate" "$work/difs" 2>/dev/null)
	s=$(date +%s.%N)
	"$work/pmdump" states "$capture" >/dev/null
	e=$(date +%s.%N)
	pm=$(awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f", e - s }')
	best_c=$(awk -v a="$best_c" -v b="$c" 'BEGIN { print (a == "" || b < a) ? b : a }')
	best_pm=$(awk -v a="$best_pm" -v b="$pm" 'BEGIN { print (a == "" || b < a) ? b : a }')
done
echo "C zlib inflate only:  $best_c s"
echo "pmdump states:        $best_pm s"
awk -v c="$best_c" -v p="$best_pm" 'BEGIN { printf "pmdump / C zlib:      %.2f (target <= 1.5)\n", p / c }'
