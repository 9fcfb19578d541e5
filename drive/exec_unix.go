//go:build unix

package drive

import (
	"fmt"
	"io"
	"os/exec"
	"syscall"
	"time"
)

// server is a game server drive started itself (Options.Exec): a shell
// command line in a process group of its own, so that stopping it stops
// whatever it started (a wrapper, a debugger and the game under it).
type server struct {
	cmd  *exec.Cmd
	done chan error
}

// stopGrace is how long a server has to end after SIGTERM before it is
// killed: the game's headless server may need SIGKILL after a second.
const stopGrace = time.Second

// startServer starts command with sh -c, its output to out (nil: dropped).
func startServer(command string, out io.Writer) (*server, error) {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("drive: starting the server (%s): %w", command, err)
	}
	s := &server{cmd: cmd, done: make(chan error, 1)}
	go func() { s.done <- cmd.Wait() }()
	return s, nil
}

// exited reports, without waiting, whether the server has ended and how.
func (s *server) exited() (bool, error) {
	select {
	case err := <-s.done:
		s.done <- err // keep it for stop
		return true, err
	default:
		return false, nil
	}
}

// stop ends the server's process group: SIGTERM, then SIGKILL after
// stopGrace.
func (s *server) stop() {
	pg := -s.cmd.Process.Pid
	syscall.Kill(pg, syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(stopGrace):
		syscall.Kill(pg, syscall.SIGKILL)
		<-s.done
	}
	syscall.Kill(pg, syscall.SIGKILL) // anything it left behind
}
