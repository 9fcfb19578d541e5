#!/usr/bin/env bash
# Prints the sha256 of the captures and ground-truth files "pmdump synth"
# writes for a fixed set of games (both eras, 1 to 7 clients, no loss to
# 40 % loss, a modern level change), one line a file. Two builds that must
# write the same bytes (a refactoring of synth's server or of statedif)
# print the same lines:
#
#   git stash; scripts/synth-sums.sh > /tmp/before; git stash pop
#   scripts/synth-sums.sh > /tmp/after; diff /tmp/before /tmp/after
#
#   scripts/synth-sums.sh [PMDUMP-BINARY]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	bin=$dir.pmdump
	go build -o "$bin" ./cmd/pmdump
	trap 'rm -rf "$dir" "$bin"' EXIT
fi
for era in legacy modern; do
	# seed players loss duration
	for game in "1 3 0 20s" "2 3 0.05 30s" "3 7 0.2 20s" "4 5 0.4 15s" "5 2 0.1 40s" "6 7 0 10s"; do
		set -- $game
		"$bin" synth -o "$dir/game.pcap" --era "$era" --seed "$1" --players "$2" --loss "$3" --duration "$4" >/dev/null 2>&1
		for f in "$dir"/game*; do
			echo "$era seed $1 players $2 loss $3 $4 $(basename "$f") $(sha256sum <"$f" | cut -c1-16)"
		done
		rm -f "$dir"/game*
	done
done
