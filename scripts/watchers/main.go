// Command watchers joins several protocol-true game clients to a game
// server (such as pmdump serve) and lets them watch for a while, then
// reports the states each applied per second. Used by compare-replay.sh to
// measure serve's CPU use.
//
//	go run ./scripts/watchers -n 7 -for 20s -era modern 127.0.0.1:24785
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/pmdump/pmdump/decode"
	"github.com/pmdump/pmdump/internal/gameclient"
)

func main() {
	n := flag.Int("n", 7, "number of clients")
	d := flag.Duration("for", 20*time.Second, "how long to watch")
	eraName := flag.String("era", "modern", "protocol era of the server")
	flag.Parse()
	era, err := decode.ParseVersion(*eraName)
	if err != nil || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: watchers [-n N] [-for D] [-era E] HOST:PORT")
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *d)
	defer cancel()
	var wg sync.WaitGroup
	counts := make([]int, *n)
	var start time.Time
	for i := range *n {
		c, err := gameclient.Join(ctx, flag.Arg(0), gameclient.Options{Era: era, Color: i + 1, Hostname: fmt.Sprintf("watcher%d", i+1)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "watchers: join:", err)
			os.Exit(2)
		}
		if i == 0 {
			start = time.Now()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer c.Close()
			c.Run(ctx, *d, func(*gameclient.Client) bool { return false })
			counts[i] = len(c.Applied)
		}()
	}
	wg.Wait()
	el := time.Since(start).Seconds()
	total := 0
	for i, k := range counts {
		fmt.Printf("client %d: %d states, %.1f/s\n", i+1, k, float64(k)/el)
		total += k
	}
	fmt.Printf("all: %d states in %.1f s, %.1f/s per client\n", total, el, float64(total)/el/float64(*n))
}
