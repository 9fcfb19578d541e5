#!/usr/bin/env bash
# Times "pmdump read" against "tcpdump -nr" and "tshark -r", each printing one
# line per packet to /dev/null, and tshark with pmdump's Wireshark dissector
# against tshark alone, on the same large real capture: the real
# modern/multi capture appended N times (default 20, about 290k packets).
# Tools that are not installed are skipped. Best of RUNS wall-clock runs.
#
#   scripts/compare-speed.sh [N] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
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

best() { # best wall time in seconds of $runs runs of "$@" > /dev/null
	local b=""
	for _ in $(seq "$runs"); do
		local s e t
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s.%N)
		t=$(awk -v s="$s" -v e="$e" 'BEGIN { print e - s }')
		b=$(awk -v a="$b" -v t="$t" 'BEGIN { print (a == "" || t < a) ? t : a }')
	done
	printf '%.3f' "$b"
}

pm=$(best "$work/pmdump" read "$big")
printf '%-28s %8s s\n' "pmdump read" "$pm"
st=$(best "$work/pmdump" stats "$big")
printf '%-28s %8s s   %.1fx read (target <= 3x)\n' "pmdump stats" "$st" "$(awk -v a="$st" -v b="$pm" 'BEGIN { print a / b }')"
if command -v tcpdump >/dev/null; then
	td=$(best tcpdump -nr "$big")
	printf '%-28s %8s s   pmdump is %.1fx as fast (target >= 5x)\n' "tcpdump -nr" "$td" "$(awk -v a="$td" -v b="$pm" 'BEGIN { print a / b }')"
else
	echo "tcpdump: not installed, skipped"
fi
if command -v tshark >/dev/null; then
	ts=$(best tshark -n -r "$big")
	printf '%-28s %8s s   pmdump is %.1fx as fast (target >= 20x)\n' "tshark -n -r" "$ts" "$(awk -v a="$ts" -v b="$pm" 'BEGIN { print a / b }')"
	# The generated Wireshark dissector, printing the summary lines as
	# tshark alone does (no tree: no dif is inflated). Wall time, as above;
	# scripts/dissector-speed.sh measures it in turns, with processor time.
	"$work/pmdump" dissector -o "$work/pmnet.lua"
	td=$(best tshark -n -X "lua_script:$work/pmnet.lua" -r "$big")
	printf '%-28s %8s s   %.1fx tshark alone (target <= 3x)\n' "tshark with pmnet.lua" "$td" "$(awk -v a="$td" -v b="$ts" 'BEGIN { print a / b }')"
else
	echo "tshark: not installed, skipped"
fi
