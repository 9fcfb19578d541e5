package serve

import (
	"context"
	"fmt"
	"net"
	"time"
)

func ExampleLoad() {
	rec, err := Load([]string{"sample:legacy"}, LoadOptions{Player: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s era, player %d: %d states of %d bytes\n", rec.Era, rec.Player, len(rec.States), rec.Size)
	// Output: legacy era, player 1: 26 states of 106144 bytes
}

func ExampleServer() {
	rec, err := Load([]string{"sample:modern"}, LoadOptions{Player: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	srv, err := New(rec, ln, Options{Speed: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	srv.Serve(ctx) // game clients would send their 1234 to ln
	fmt.Println(len(srv.Status()), "clients")
	// Output: 0 clients
}

// A handshake that is not followed by a join is closed after
// Limits.Handshake, and counted.
func ExampleServer_Counts() {
	rec, err := Load([]string{"sample:modern"}, LoadOptions{Player: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	ln, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ln.Close()
	srv, err := New(rec, ln, Options{Limits: Limits{Handshake: 100 * time.Millisecond}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go srv.Serve(ctx)
	peer, err := net.DialUDP("udp", nil, ln.LocalAddr().(*net.UDPAddr))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer peer.Close()
	peer.Write([]byte("1234")) // and never a join
	for range 300 {
		if srv.Counts().TimedOut > 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	fmt.Printf("%d handshake timed out, %d clients live\n", srv.Counts().TimedOut, len(srv.Status()))
	// Output: 1 handshake timed out, 0 clients live
}
