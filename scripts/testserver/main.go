// Command testserver runs the test game server of internal/gameserver (the
// synthetic world, the game's timing rules, snfo for a remote-control
// client), so pmdump drive can be tried without the game; with -record it
// writes a recording of a game of that server instead.
//
//	go run ./scripts/testserver -record demo.pcap -clients 3 -frames 800
//	go run ./scripts/testserver -listen 127.0.0.1:24785
//	pmdump drive demo.pcap --to 127.0.0.1:24785
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"time"

	"github.com/pmdump/pmdump/internal/gameserver"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:24785", "the server's listening socket")
	seed := flag.Int64("seed", 1, "the game (level and recording)")
	frame := flag.Duration("frame", 25*time.Millisecond, "frame length")
	lockstep := flag.Bool("lockstep", false, "wait for the remote-control client's keep-alive before each frame")
	record := flag.String("record", "", "write a recorded game to this pcap `FILE` and exit")
	clients := flag.Int("clients", 3, "clients of the recorded game")
	frames := flag.Int("frames", 800, "frames of the recorded game")
	flag.Parse()
	if *record != "" {
		if err := gameserver.RecordFile(*record, script(*seed, *clients, int32(*frames))); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	srv, err := gameserver.Listen(*listen, gameserver.Options{Seed: *seed, FrameTime: *frame, Lockstep: *lockstep})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "test game server (seed %d) on %s\n", *seed, srv.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := srv.Run(ctx, 0); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// script is a game of n clients joining a second apart from frame 100;
// each changes its controls now and then, some changes read on time, some
// late (the server goes back), some early.
func script(seed int64, n int, frames int32) gameserver.Script {
	r := rand.New(rand.NewPCG(uint64(seed), 99))
	s := gameserver.Script{Seed: seed, Frames: frames}
	for c := range n {
		sc := gameserver.ScriptClient{Color: 1 + r.IntN(15), Hostname: fmt.Sprintf("lan-pc%d", c+1), Join: 100 + 40*int32(c)}
		for f := sc.Join + 5; f < frames-5; f += 3 + int32(r.IntN(12)) {
			sc.Inputs = append(sc.Inputs, gameserver.Input{Read: f, Frame: f - int32(r.IntN(4)) + 1, Move: byte(r.IntN(64))})
		}
		s.Clients = append(s.Clients, sc)
	}
	return s
}
