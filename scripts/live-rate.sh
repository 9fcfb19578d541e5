#!/usr/bin/env bash
# Measures the live capture source (source.OpenLive) on the loopback device
# of a network namespace made for the purpose: at 200k datagrams/s for 10 s
# (does it keep up, with no kernel drops and flat memory?) and at the rate of
# a real 8-player game, about 600 datagrams/s (how much CPU?). Needs root.
#
#	scripts/live-rate.sh [RATE...]     default: 200000 600
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
	echo "live-rate.sh needs root (network namespace, AF_PACKET capture)" >&2
	exit 1
fi
rates=("$@")
[ ${#rates[@]} -gt 0 ] || rates=(200000 600)
bin=$(mktemp -d)
ns=pmdump-rate-$$
trap 'ip netns del $ns 2>/dev/null || true; rm -rf "$bin"' EXIT
go build -o "$bin/liverate" ./scripts/liverate
ip netns add "$ns"
ip netns exec "$ns" ip link set lo up
for rate in "${rates[@]}"; do
	echo "== $rate datagrams/s for 10 s"
	ip netns exec "$ns" "$bin/liverate" sniff -d 11.5s ${SNIFF_FLAGS:-} &
	sniffer=$!
	sleep 0.5
	ip netns exec "$ns" "$bin/liverate" send -rate "$rate" -d 10s
	wait "$sniffer"
done
