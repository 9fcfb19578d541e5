#!/usr/bin/env bash
# Size and speed of pmdump report on the one-hour 8-player game (the server
# and 7 clients, modern era, seed 7: about a million difs, 835 MB): the time
# and peak memory of "pmdump stats --health" and of "pmdump report" on the
# same capture (RUNS times each, alternating), the page's size, and its first
# paint in headless Chromium (scripts/reportpaint). The capture is generated
# once into CAPTURE (default /tmp/hour.pcap) and reused. Needs GNU time
# (/usr/bin/time) and chromium.
#
#   scripts/report-speed.sh [CAPTURE] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
capture=${1:-/tmp/hour.pcap}
runs=${2:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pmdump" ./cmd/pmdump
if [ ! -s "$capture" ]; then
	"$work/pmdump" synth -o "$capture" --players 7 --duration 1h --era modern --seed 7
fi
ls -l "$capture"
for i in $(seq "$runs"); do
	/usr/bin/time -f "stats --health: %e s (%U s user), peak RSS %M KB" "$work/pmdump" stats --health "$capture" >/dev/null
	/usr/bin/time -f "report:         %e s (%U s user), peak RSS %M KB" "$work/pmdump" report "$capture" -o "$work/game.html"
done
ls -l "$work/game.html"
go run ./scripts/reportpaint "$work/game.html"
