#!/usr/bin/env bash
# Peak memory (maximum resident set size, from GNU time) of "pmdump replay"
# against tcpreplay, each sending the same large real capture as fast as it
# can on the loopback device: the real modern/multi capture appended N times
# (default 20: 286,520 packets, 172 MB). pmdump replays every conversation
# from its own sockets, both roles, to a server address on 127.0.0.1;
# tcpreplay sends the frames as they are on lo (root). pmdump is also
# measured on one copy, to show its memory does not grow with the capture.
#
#   scripts/replay-memory.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
copies=${1:-20}
src=../shared/captures/modern/multi/multi.pcap
if [ ! -f "$src" ]; then
	echo "skip: $src not found (the real captures live in ../shared)" >&2
	exit 0
fi
if ! command -v /usr/bin/time >/dev/null; then
	echo "skip: GNU time (/usr/bin/time) not installed" >&2
	exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pmdump" ./cmd/pmdump
big=$work/big.pcap
{ cat "$src"; for _ in $(seq 2 "$copies"); do tail -c +25 "$src"; done; } >"$big"
echo "capture: $copies x $(basename "$src"), $(du -h "$big" | cut -f1)"

peak() { # label, command…: prints the peak RSS and wall time of the command
	local label=$1
	shift
	/usr/bin/time -f "%M %e" -o "$work/time" "$@" >"$work/out" 2>&1 || true
	read -r kb secs <"$work/time"
	printf '%-40s %7.1f MB peak RSS, %6.2f s\n' "$label" "$(awk -v k="$kb" 'BEGIN { print k / 1024 }')" "$secs"
}

peak "pmdump replay --asap (1 copy)" "$work/pmdump" replay "$src" --to 127.0.0.1:24785 --asap
peak "pmdump replay --asap ($copies copies)" "$work/pmdump" replay "$big" --to 127.0.0.1:24785 --asap
grep -E '^(sent|conversations|network)' "$work/out" | sed 's/^/    /'
if command -v tcpreplay >/dev/null && [ "$(id -u)" = 0 ]; then
	peak "tcpreplay --topspeed -i lo ($copies copies)" tcpreplay -q --topspeed -i lo "$big"
	grep -E 'Actual|Successful' "$work/out" | sed 's/^/    /'
else
	echo "tcpreplay: not installed or not root, skipped"
fi
