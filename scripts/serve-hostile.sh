#!/usr/bin/env bash
# Measures pmdump serve against hostile peers on loopback (issue targets in
# parentheses): bytes sent over 10 s to a peer that joins and never
# acknowledges, at speed 1 and 10 (≤ 10,000× what it sent); the server's
# RSS after 5,000 handshakes that never join (within 40 MB of its start once
# they time out) and after 100 join/leave cycles (within 60 MB); how long a
# victim endpoint locked out by a spoofed handshake waits (≤ 10 s); and
# whether a real client gets in past 7 squatters. Serves a real capture
# (default ../shared/captures/modern/basic/basic.pcap, player 1) in a loop.
#
#	scripts/serve-hostile.sh [CAPTURE PLAYER ERA]
set -euo pipefail
cd "$(dirname "$0")/.."
capture=${1:-../shared/captures/modern/basic/basic.pcap}
player=${2:-1}
era=${3:-modern}
bin=$(mktemp -d)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$bin"' EXIT
go build -o "$bin/pmdump" ./cmd/pmdump
go build -o "$bin/servehostile" ./scripts/servehostile
port=$((30000 + RANDOM % 20000))

serve() { # speed
	rm -f "$bin/serve.out" "$bin/serve.log"
	"$bin/pmdump" serve "$capture" --player "$player" --listen "127.0.0.1:$port" --loop --speed "$1" 2>"$bin/serve.log" >"$bin/serve.out" &
	server=$!
	for _ in $(seq 300); do # loading the capture takes a moment
		grep -qs serving "$bin/serve.out" && break
		sleep 0.1
	done
	cat "$bin/serve.out"
}
stop() {
	kill "$server"; wait "$server" 2>/dev/null || true; server=
	echo "status: $(grep -v '^client ' "$bin/serve.log" | tail -1)"
}

echo "== speed 1"
serve 1
for t in noack handshakes cycles lockout squatters; do
	"$bin/servehostile" -pid "$server" -era "$era" -test "$t" "127.0.0.1:$port"
done
stop
echo "== speed 10"
serve 10
"$bin/servehostile" -pid "$server" -era "$era" -test noack "127.0.0.1:$port"
stop
