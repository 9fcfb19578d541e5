#!/usr/bin/env bash
# The real-game tier: builds the game's headless servers from ../shared/game
# (its build.sh, into its cache), runs each in a network namespace made for
# the run, and drives the real captures of that version against it with
# `pmdump drive --exec`, RUNS times each (default 1). Prints one line per
# run: capture, try count, states equal / different / missing, the margin
# line; and a total per version. Exits 1 when a run was not reproduced.
#
#   scripts/real-game.sh [--runs N] [--retries N] [--load N] [VERSION…]
#
# VERSION is the build kit's name: modern, i32, head (default: all three;
# j2 has no capture here of its own build). --load N runs N busy loops
# beside it (a loaded machine). Needs root (network namespaces); skips with
# a message without root or without ../shared/game.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
game="$root/../shared/game"
captures="$root/../shared/captures"
runs=1 retries=0 load=0 versions=()
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=$2; shift 2 ;;
	--retries) retries=$2; shift 2 ;;
	--load) load=$2; shift 2 ;;
	*) versions+=("$1"); shift ;;
	esac
done
[ ${#versions[@]} -gt 0 ] || versions=(modern i32 head)
if [ ! -x "$game/build.sh" ]; then
	echo "real-game: skipped: $game is absent"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "real-game: skipped: needs root (network namespaces, the game's build dependencies)"
	exit 0
fi
work=$(mktemp -d /tmp/pmdump-real-game.XXXXXX)
ns=pmdrg$$
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/pmdump" ./cmd/pmdump
# The builds first: build.sh installs what the game needs (iproute2 too).
for v in "${versions[@]}"; do
	"$game/build.sh" "$v" >"$work/build-$v.log" 2>&1 || { echo "real-game: building $v failed:"; tail -5 "$work/build-$v.log"; exit 1; }
done
ip netns add "$ns"
ip -n "$ns" link set lo up
for _ in $(seq "$load"); do (while :; do :; done) & done

# captures_of VERSION: the real captures recorded with that build.
captures_of() {
	case "$1" in
	modern) ls "$captures"/modern/*/*.pcap ;;
	head) ls "$captures"/head-2026-08/*/capture.pcap ;;
	i32) ls "$captures"/aug-2024/*/capture.pcap ;;
	esac
}
# files_of VERSION: run-server.sh's --files as the captures were made.
files_of() { [ "$1" != modern ] && echo "--files 1" || true; }

status=0
for v in "${versions[@]}"; do
	total=0 good=0
	for cap in $(captures_of "$v"); do
		name=${cap#"$captures"/}
		case "$name" in
		*/lossy_joinfail/*)
			# The server registered a client whose join reply was lost (it
			# sent it states and dropped it 7 s later); drive plays only
			# the clients that joined, so the live game lacks that player.
			echo "$v $name: skipped: a failed join (the server kept a player whose sjon was lost), which drive does not replay"
			continue ;;
		esac
		for n in $(seq "$runs"); do
			srv="$work/srv-$v"
			cmd="rm -rf '$srv' && '$game/run-server.sh' $v '$srv' $(files_of "$v") >/dev/null 2>&1 && cd '$srv' && exec ./pm -sh 1"
			out="$work/drive.out"
			rc=0
			ip netns exec "$ns" "$work/pmdump" drive "$cap" --to 127.0.0.1:24785 --exec "$cmd" \
				--retries "$retries" --max-time 5m --exec-log "$work/server.log" >"$out" 2>&1 || rc=$?
			states=$(grep '^states:' "$out" | sed 's/^states: //; s/;.*//' || true)
			margin=$(grep '^margin' "$out" | sed 's/^margin before each packet.s frame: //' || true)
			tries=$(grep '^tries:' "$out" | sed 's/^tries: //' || echo 1)
			total=$((total + 1))
			if [ "$rc" = 0 ]; then good=$((good + 1)); verdict=reproduced; else verdict="exit $rc"; status=1; fi
			echo "$v $name run $n: $verdict, tries ${tries:-1}; ${states:-no summary}; $margin"
			[ "$rc" = 0 ] || grep -E '^(first divergence|cause|stopped|pmdump:)' "$out" | sed 's/^/    /' || true
		done
	done
	echo "$v: $good of $total runs reproduced every recorded state"
done
exit $status
