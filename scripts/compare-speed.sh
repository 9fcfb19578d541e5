#!/usr/bin/env bash
# Times "pmdump read" against "tcpdump -nr" and "tshark -r", each printing one
# line per packet to /dev/null, and tshark with pmdump's Wireshark dissector
# against tshark alone, on the same large real capture: the real
# modern/multi capture appended N times (default 20, about 290k packets).
# Tools that are not installed are skipped; --no-tshark skips tshark (its
# runs take most of the script's time). Each figure is the best of RUNS runs:
# wall time, and CPU time (user + system) beside it, which says more on a
# busy machine; the load average is printed at the end.
#
# tcpdump prints local time, and without TZ in the environment the C library
# looks at /etc/localtime again for every packet (a stat call each: most of
# tcpdump's CPU time); "TZ=UTC tcpdump -nr" is timed too, without it.
#
#   scripts/compare-speed.sh [--no-tshark] [N] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
tshark=1
if [ "${1:-}" = --no-tshark ]; then
	tshark=
	shift
fi
copies=${1:-20}
runs=${2:-5}
src=../shared/captures/modern/multi/multi.pcap
if [ ! -f "$src" ]; then
	echo "skip: $src not found (the real captures live in ../shared)" >&2
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pmdump" ./cmd/pmdump
big=$work/big.pcap
if command -v mergecap >/dev/null; then
	args=()
	for _ in $(seq "$copies"); do args+=("$src"); done
	mergecap -F pcap -a -w "$big" "${args[@]}"
else
	# Same result without mergecap: one pcap header, then the records N times.
	{ cat "$src"; for _ in $(seq 2 "$copies"); do tail -c +25 "$src"; done; } >"$big"
fi
packets=$("$work/pmdump" read "$big" | wc -l)
echo "capture: $copies x $(basename "$src"), $packets packets, $(du -h "$big" | cut -f1)"

best() { # best wall and best CPU (user + system) seconds of $runs runs of "$@" > /dev/null
	local bw="" bc="" t w u s c
	for _ in $(seq "$runs"); do
		t=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null 2>&1; } 2>&1 )
		read -r w u s <<<"$t"
		c=$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }')
		bw=$(awk -v a="$bw" -v t="$w" 'BEGIN { print (a == "" || t < a) ? t : a }')
		bc=$(awk -v a="$bc" -v t="$c" 'BEGIN { print (a == "" || t < a) ? t : a }')
	done
	echo "$bw $bc"
}

# row NAME "WALL CPU" [NOTE]
row() {
	local w c
	read -r w c <<<"$2"
	printf '%-28s %7.3f s  %7.3f s  %s\n' "$1" "$w" "$c" "${3:-}"
}

# ratio "WALL CPU" "WALL CPU": a/b by wall and by CPU time
ratio() {
	local aw ac bw bc
	read -r aw ac <<<"$1"
	read -r bw bc <<<"$2"
	awk -v aw="$aw" -v ac="$ac" -v bw="$bw" -v bc="$bc" 'BEGIN { printf "%.1fx (CPU %.1fx)", aw / bw, ac / bc }'
}

printf '%-28s %9s  %9s\n' "" "wall" "CPU"
pm=$(best "$work/pmdump" read "$big")
row "pmdump read" "$pm"
st=$(best "$work/pmdump" stats "$big")
row "pmdump stats" "$st" "$(ratio "$st" "$pm") read (target <= 2x)"
if command -v tcpdump >/dev/null; then
	td=$(best tcpdump -nr "$big")
	row "tcpdump -nr" "$td" "pmdump read is $(ratio "$td" "$pm") as fast (target >= 5x)"
	tu=$(best env TZ=UTC tcpdump -nr "$big")
	row "TZ=UTC tcpdump -nr" "$tu" "pmdump read is $(ratio "$tu" "$pm") as fast"
else
	echo "tcpdump: not installed, skipped"
fi
if [ -z "$tshark" ]; then
	echo "tshark: skipped (--no-tshark)"
elif command -v tshark >/dev/null; then
	ts=$(best tshark -n -r "$big")
	row "tshark -n -r" "$ts" "pmdump read is $(ratio "$ts" "$pm") as fast (target >= 20x)"
	# The generated Wireshark dissector, printing the summary lines as
	# tshark alone does (no tree: no dif is inflated). Wall time, as above;
	# scripts/dissector-speed.sh measures it in turns, with processor time.
	"$work/pmdump" dissector -o "$work/pmnet.lua"
	tl=$(best tshark -n -X "lua_script:$work/pmnet.lua" -r "$big")
	row "tshark with pmnet.lua" "$tl" "$(ratio "$tl" "$ts") tshark alone (target <= 3x)"
else
	echo "tshark: not installed, skipped"
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
