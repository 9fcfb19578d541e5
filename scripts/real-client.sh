#!/usr/bin/env bash
# serve to a real game client: builds the game's instrumented client from
# ../shared/game (build.sh VERSION --instrumented), serves a recording of
# that build with `pmdump serve` in a network namespace made for the run,
# runs the client under Xvfb against it, and compares the sha256 of every
# state the client applied (its PM_RC_CSV) with the recording's states of
# that player. Exits 1 when a state differs or none was applied.
#
#   scripts/real-client.sh [VERSION CAPTURE PLAYER]
#
# Default: head ../shared/captures/head-2026-08/basic/capture.pcap 1.
# Needs root (namespaces, the build's dependencies); skips with a message
# without it or without ../shared/game.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
game="$root/../shared/game"
v=${1:-head}
cap=${2:-$root/../shared/captures/head-2026-08/basic/capture.pcap}
player=${3:-1}
if [ ! -x "$game/build.sh" ] || [ ! -f "$cap" ]; then
	echo "real-client: skipped: $game or $cap is absent"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "real-client: skipped: needs root (network namespaces, the game's build dependencies)"
	exit 0
fi
work=$(mktemp -d /tmp/pmdump-real-client.XXXXXX)
ns=pmdrc$$
cleanup() {
	jobs -p | xargs -r kill 2>/dev/null || true
	[ -n "${xpid:-}" ] && kill "$xpid" 2>/dev/null || true
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/pmdump" ./cmd/pmdump
"$game/build.sh" "$v" --instrumented >"$work/build.log" 2>&1 || { tail -5 "$work/build.log"; exit 1; }
"$game/run-server.sh" "$v" "$work/client" --client 1 --instrumented >/dev/null 2>&1
ip netns add "$ns"
ip -n "$ns" link set lo up
display=:$((60 + $$ % 30))
ip netns exec "$ns" Xvfb "$display" -screen 0 1400x300x24 -nolisten tcp >"$work/xvfb.log" 2>&1 &
xpid=$!
sleep 1
ip netns exec "$ns" "$work/pmdump" serve "$cap" --player "$player" --listen 127.0.0.1:24785 --exit-when-done >"$work/serve.out" 2>&1 &
spid=$!
# The client's first start draws its level icons (about 30 s) before it
# joins; it is stopped once serve has served the whole recording.
server=127.0.0.1
case "$v" in legacy | modern) server=127.0.0.1:24785 ;; esac # the older clients take the port on the command line
(cd "$work/client" && PM_RC_CSV="$work/applied.csv" DISPLAY=$display exec ip netns exec "$ns" ./pm -c "$server") >"$work/client.log" 2>&1 &
cpid=$!
for _ in $(seq 600); do kill -0 "$spid" 2>/dev/null || break; sleep 1; done
kill "$cpid" 2>/dev/null || true
sleep 1
kill -9 "$cpid" 2>/dev/null || true
# The recording's states of that player, as "dst sha256" (the client's
# level-sequence counter is its own, so states are matched by frame and
# hash), and the client's rows.
"$work/pmdump" states --json "$cap" 2>/dev/null |
	grep "\"player\":$player," | grep '"status":"ok"' |
	sed -E 's/.*"dst":([0-9]+),.*"sha256":"([0-9a-f]+)".*/\1 \2/' | sort -u >"$work/recorded"
[ -f "$work/applied.csv" ] || { echo "real-client: $v: the client applied no state"; tail -5 "$work/serve.out"; exit 1; }
tail -n +2 "$work/applied.csv" | awk -F, '{print $1 " " $3}' | sort -u >"$work/applied"
applied=$(wc -l <"$work/applied")
equal=$(comm -12 "$work/applied" "$work/recorded" | wc -l)
echo "real-client: $v $(basename "$(dirname "$cap")"): the real client applied $applied states served from the recording; $equal equal to the recorded states, $((applied - equal)) not"
[ "$applied" -gt 0 ] && [ "$equal" = "$applied" ]
