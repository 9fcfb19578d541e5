package drive_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/pmdump/pmdump/drive"
	"github.com/pmdump/pmdump/internal/gameserver"
)

// A recorded game of one client who joins in frame 10 and whose input for
// frame 18 the server reads in frame 20 (late: it goes back to frame 18).
func recordGame() (string, func()) {
	dir, _ := os.MkdirTemp("", "drive")
	path := filepath.Join(dir, "game.pcap")
	gameserver.RecordFile(path, gameserver.Script{Seed: 1, Frames: 60, Clients: []gameserver.ScriptClient{
		{Color: 4, Hostname: "lan-pc1", Join: 10, Inputs: []gameserver.Input{{Read: 20, Frame: 18, Move: 0x02}}},
	}})
	return path, func() { os.RemoveAll(dir) }
}

func ExampleLoad() {
	path, done := recordGame()
	defer done()
	rec, err := drive.Load(context.Background(), []string{path}, drive.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rec.Close()
	for _, a := range rec.Actions {
		fmt.Println(a, a.Check)
	}
	// Output:
	// join of client 1 (capture frame 3) read in frame 10 confirmed
	// cdat of client 1 (capture frame 27, frame 18, move right) read in frame 20 confirmed
}

func ExampleRun() {
	path, done := recordGame()
	defer done()
	rec, err := drive.Load(context.Background(), []string{path}, drive.LoadOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rec.Close()
	// A test server of the same game (the same seed picks the same level).
	srv, _ := gameserver.Listen("127.0.0.1:0", gameserver.Options{Seed: 1, FrameTime: 2 * time.Millisecond, Lockstep: true})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Run(ctx, 0)
	sum, err := drive.Run(ctx, rec, srv.Addr().String(), drive.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("reproduced %v: %d equal, %d different, %d missing\n", sum.Reproduced, sum.Equal, sum.Different, sum.Missing)
	// Output:
	// reproduced true: 50 equal, 0 different, 0 missing
}
