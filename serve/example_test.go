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
