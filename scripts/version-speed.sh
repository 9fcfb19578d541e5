#!/usr/bin/env bash
# Times "pmdump read", "pmdump stats" and "pmdump stats --health" (every
# state rebuilt) on the one-hour 8-player game "pmdump synth --players 7
# --duration 1h --seed 7" of each wire version given (default: modern and
# the newest, so a new version's cost shows beside the one it replaced), and
# tcpdump -nr on the same files where it is installed. The games are made
# once into DIR (default a temporary folder; pass one to keep them, about
# 860 MB each). Each figure is the best of RUNS runs: wall time and CPU time
# (user + system).
#
#   scripts/version-speed.sh [-d DIR] [-r RUNS] [VERSION...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="" runs=3
while getopts d:r: o; do
	case $o in
	d) dir=$OPTARG ;;
	r) runs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[ -n "$dir" ] || dir=$work
mkdir -p "$dir"
go build -o "$work/pmdump" ./cmd/pmdump
pm=$work/pmdump
versions=("$@")
if [ ${#versions[@]} -eq 0 ]; then
	newest=$("$pm" versions --json | tail -1 | sed 's/^{"name":"\([^"]*\)".*/\1/')
	versions=(modern "$newest")
fi

best() { # best wall and CPU seconds of $runs runs of "$@" > /dev/null
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
row() { local w c; read -r w c <<<"$2"; printf '%-34s %8.2f s %8.2f s\n' "$1" "$w" "$c"; }

printf '%-34s %10s %10s\n' "" "wall" "CPU"
for v in "${versions[@]}"; do
	f=$dir/hour-$v.pcap
	[ -s "$f" ] || "$pm" synth -o "$f" --players 7 --duration 1h --seed 7 --era "$v" --no-truth
	echo "$v: $(du -h "$f" | cut -f1), $(tr -d '\n' < <("$pm" read "$f" | wc -l)) packets"
	row "  pmdump read" "$(best "$pm" read "$f")"
	row "  pmdump stats" "$(best "$pm" stats "$f")"
	row "  pmdump stats --health" "$(best "$pm" stats --health "$f")"
	if command -v tcpdump >/dev/null; then
		row "  TZ=UTC tcpdump -nr" "$(best env TZ=UTC tcpdump -nr "$f")"
	fi
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
