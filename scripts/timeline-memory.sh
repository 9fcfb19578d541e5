#!/usr/bin/env bash
# Peak memory of indexing a long game: generates a synthetic modern game with
# 8 players (the server and 7 clients; DURATION, default 1h: about a million
# difs, 835 MB), then measures the peak RSS and time of "pmdump states" (a
# full pass) and "pmdump state" (the timeline index plus one random state).
# Needs GNU time (/usr/bin/time).
#
#   scripts/timeline-memory.sh [DURATION]
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-1h}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/pmdump" ./cmd/pmdump
/usr/bin/time -f "synth:  %e s, peak RSS %M KB" "$work/pmdump" synth -o "$work/game.pcap" --players 7 --duration "$dur" --era modern --seed 7
ls -l "$work/game.pcap"
/usr/bin/time -f "states: %e s (%U s user), peak RSS %M KB" "$work/pmdump" states "$work/game.pcap" >/dev/null
/usr/bin/time -f "state:  %e s (%U s user), peak RSS %M KB" "$work/pmdump" state "$work/game.pcap" --player 3 --frame 1000 --slsn 1 -o /dev/null
/usr/bin/time -f "diff --all-players (every client's timeline): %e s (%U s user), peak RSS %M KB" "$work/pmdump" diff "$work/game.pcap" --all-players 1000 --slsn 1 >/dev/null
