#!/usr/bin/env bash
# Measures "pmdump replay" against tcpreplay on the same real capture over the
# loopback interface, and the CPU "pmdump serve" uses to feed 7 clients.
#
#  1. send-time error: "pmdump replay --speed 4" and "tcpreplay -x 4", each
#     watched on lo (AF_PACKET, kernel time stamps) by scripts/replaytiming,
#     which matches the datagrams with the capture's in order and reports
#     |actual − due| p50/p99/max, due = time since the first ÷ 4;
#  2. rate: "pmdump replay --asap" and "tcpreplay --topspeed", LOOPS times
#     over (default 5: what the capture ring holds);
#     and the same at 100 loops as each tool reports it, with no capture;
#  3. serve: "pmdump serve" of player 1 at about 40 states/s (--speed 1.17:
#     the capture has 34 states/s) to 7 protocol-true clients
#     (scripts/watchers) for 20 s; CPU time of the serve process from
#     /proc/PID/stat.
# Both replay tools run under SCHED_FIFO (chrt -f 50), as a replay on a
# quiet machine would. Needs root (AF_PACKET, chrt) and tcpreplay
# (apt-get install tcpreplay); without it only pmdump is measured.
#
#   scripts/compare-replay.sh [CAPTURE] [LOOPS]
set -euo pipefail
cd "$(dirname "$0")/.."
cap=${1:-../shared/captures/modern/basic/basic.pcap}
loops=${2:-5}
if [ ! -f "$cap" ]; then
	echo "skip: $cap not found (the real captures live in ../shared)" >&2
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "needs root (AF_PACKET capture on lo, chrt)" >&2
	exit 1
fi
work=$(mktemp -d)
serve_pid=
cleanup() {
	[ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/pmdump" ./cmd/pmdump
go build -o "$work/replaytiming" ./scripts/replaytiming
go build -o "$work/watchers" ./scripts/watchers
rt() { chrt -f 50 "$work/replaytiming" "$@" 2>&1 | grep -v $'Warning\\|Unsupported physical\\|^\t\\|^Actual\\|^Rated\\|^Flows\\|^Statistics' || true; }
sink=127.0.0.1:${SINK_PORT:-39999} # a port nothing else uses
echo "capture: $cap ($("$work/pmdump" read "$cap" | wc -l) packets)"
echo
echo "== send-time error at 4x"
rt -sink $sink -capture "$cap" -speed 4 -- "$work/pmdump" replay "$cap" --to $sink --speed 4 | sed 's/^/  /'
if command -v tcpreplay >/dev/null; then
	rt -capture "$cap" -speed 4 -- tcpreplay -q -i lo -x 4 "$cap" | sed 's/^/  /'
else
	echo "  tcpreplay not installed: skipped"
fi
echo
echo "== as fast as possible, $loops loops"
for run in 1 2 3; do
	rt -sink $sink -capture "$cap" -speed 0 -loop "$loops" -- "$work/pmdump" replay "$cap" --to $sink --asap --loop "$loops" | grep -A1 'seen on' | sed "s/^/  run $run: /"
	if command -v tcpreplay >/dev/null; then
		rt -capture "$cap" -speed 0 -loop "$loops" -- tcpreplay -q -i lo --topspeed --loop "$loops" "$cap" | grep -A1 'seen on' | sed "s/^/  run $run: /"
	fi
done
echo
echo "== as fast as possible, 100 loops, as each tool reports it (no capture running)"
for run in 1 2 3; do
	python3 - "$sink" <<'PY' &
import socket, sys, time
h, p = sys.argv[1].rsplit(":", 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
s.bind((h, int(p)))
time.sleep(5)
PY
	sink_pid=$!
	sleep 0.3
	chrt -f 50 "$work/pmdump" replay "$cap" --to $sink --asap --loop 100 | head -1 | sed "s/^/  run $run: pmdump: /"
	kill "$sink_pid" 2>/dev/null || true
	wait "$sink_pid" 2>/dev/null || true
	if command -v tcpreplay >/dev/null; then
		chrt -f 50 tcpreplay -q -i lo --topspeed --loop 100 "$cap" 2>/dev/null | grep '^Rated' | sed "s/^/  run $run: tcpreplay: /"
	fi
done
echo
echo "== serve: 7 clients at about 40 states/s for 20 s"
port=24990
"$work/pmdump" serve "$cap" --player 1 --listen 127.0.0.1:$port --speed 1.17 --from 0 --slsn 1 >"$work/serve.out" 2>"$work/serve.err" &
serve_pid=$!
for _ in $(seq 100); do grep -qs serving "$work/serve.out" && break; sleep 0.1; done
ticks() { awk '{print $14 + $15}' "/proc/$serve_pid/stat"; }
hz=$(getconf CLK_TCK)
before=$(ticks)
start=$(date +%s.%N)
"$work/watchers" -n 7 -for 20s -era modern 127.0.0.1:$port | tail -1 | sed 's/^/  /'
after=$(ticks)
end=$(date +%s.%N)
awk -v t=$((after - before)) -v hz="$hz" -v s="$start" -v e="$end" \
	'BEGIN { printf "  serve CPU: %.2f s in %.1f s = %.1f %% of one core\n", t / hz, e - s, 100 * t / hz / (e - s) }'
echo "  load average: $(cut -d' ' -f1-3 /proc/loadavg)"
