//go:build !unix

package drive

import (
	"errors"
	"io"
)

// server is a game server drive started itself; on this system drive
// cannot start one.
type server struct{}

func startServer(string, io.Writer) (*server, error) {
	return nil, errors.New("drive: starting the server (Options.Exec) needs a Unix system")
}

func (*server) exited() (bool, error) { return false, nil }
func (*server) stop()                 {}
