package sender

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Fleet holds the sockets of a replay, as tcpreplay-edit's endpoint
// rewriting keeps the roles of a recording: every recorded client becomes
// a socket of its own on this machine, and the recorded server becomes the
// server's address given to NewFleet.
//
//   - A client's datagrams (c→s) go from its socket: the handshake (sent to
//     the recorded server's listening port) to the server's address, the
//     rest to the conversation's server port (below).
//   - The server's datagrams (s→c) can be sent only from an address of this
//     machine. When the server's address is one, each conversation also gets
//     a server socket on that address with a port of its own, as the game's
//     server answers each client from a new port: it sends the s→c datagrams
//     to the client's socket and is the conversation's server port. A
//     capture on that address then shows every recorded conversation apart,
//     both directions, with the game's ports (the listening port, then one
//     server port per client). Otherwise the s→c datagrams are skipped and
//     counted.
//   - When the fleet plays only the clients (serverSide false), the
//     conversation's server port is the one the server at that address
//     answered the client's socket from (a real game server answers a
//     handshake from a new port); until it answers, the server's address.
//
// Sockets are made as conversations first appear and kept for the run, so
// that later loops reuse them.
type Fleet struct {
	server     *net.UDPAddr
	network    string // udp4 or udp6
	local      bool   // the server's address is on this machine
	serverSide bool   // the server's datagrams are sent
	mu         sync.Mutex
	byConv     map[int]*convSockets
	socks      []*net.UDPConn
	wg         sync.WaitGroup
}

// convSockets are one conversation's sockets.
type convSockets struct {
	client   *net.UDPConn
	server   *net.UDPConn // nil unless the fleet plays a local server
	learned  atomic.Pointer[net.UDPAddr]
	answered chan struct{} // closed when the server first answers
	waited   bool          // a datagram waited for the answer
}

// answerWait is how long a client's first datagram after its handshake
// waits for the server's answer, whose port it goes to (a real client waits
// for it too).
const answerWait = 500 * time.Millisecond

// socketBuffer is the send and receive buffer asked for each socket: room
// for a burst, and for many queued ICMP reports.
const socketBuffer = 4 << 20

// NewFleet makes a fleet for a replay to the server at server; serverSide
// says whether the server's datagrams are sent too.
func NewFleet(server *net.UDPAddr, serverSide bool) (*Fleet, error) {
	if server == nil || server.IP == nil || server.IP.IsUnspecified() || server.Port == 0 {
		return nil, fmt.Errorf("server address %v: a host and a port are needed", server)
	}
	f := &Fleet{server: server, network: "udp4", serverSide: serverSide, byConv: map[int]*convSockets{}}
	if server.IP.To4() == nil {
		f.network = "udp6"
	}
	// The server's address is on this machine when a socket can be bound to it.
	if c, err := net.ListenUDP(f.network, &net.UDPAddr{IP: server.IP, Zone: server.Zone}); err == nil {
		c.Close()
		f.local = true
	}
	return f, nil
}

// Local reports whether the server's address is on this machine, so that
// the server's datagrams can be sent.
func (f *Fleet) Local() bool { return f.local }

// Server is the server's address.
func (f *Fleet) Server() *net.UDPAddr { return f.server }

// Close closes every socket and waits for the readers.
func (f *Fleet) Close() error {
	f.mu.Lock()
	var errs []error
	for _, c := range f.socks {
		errs = append(errs, c.Close())
	}
	f.socks = nil
	f.mu.Unlock()
	f.wg.Wait()
	return errors.Join(errs...)
}

func (f *Fleet) convs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.byConv)
}

// open binds a socket on this machine: on the server's address when the
// fleet plays a local server (so that both ends are on it), otherwise where
// the system chooses.
func (f *Fleet) open() (*net.UDPConn, error) {
	var laddr *net.UDPAddr
	if f.local {
		laddr = &net.UDPAddr{IP: f.server.IP, Zone: f.server.Zone}
	}
	c, err := net.ListenUDP(f.network, laddr)
	if err != nil {
		return nil, fmt.Errorf("open a socket: %w", err)
	}
	c.SetWriteBuffer(socketBuffer)
	c.SetReadBuffer(socketBuffer)
	if err := recvErrors(c); err != nil {
		c.Close()
		return nil, err
	}
	f.socks = append(f.socks, c)
	return c, nil
}

// sockets returns conversation id's sockets, making them the first time.
func (f *Fleet) sockets(id int) (*convSockets, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cs := f.byConv[id]; cs != nil {
		return cs, nil
	}
	c, err := f.open()
	if err != nil {
		return nil, err
	}
	cs := &convSockets{client: c, answered: make(chan struct{})}
	if f.local && f.serverSide {
		if cs.server, err = f.open(); err != nil {
			return nil, err
		}
	} else {
		f.wg.Add(1)
		go f.learn(cs)
	}
	f.byConv[id] = cs
	return cs, nil
}

// learn reads what the server sends a client's socket and keeps the port
// it answered from, the conversation's server port.
func (f *Fleet) learn(cs *convSockets) {
	defer f.wg.Done()
	buf := make([]byte, 2048)
	for {
		_, from, err := cs.client.ReadFromUDP(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // an ICMP report, counted from the error queue
		}
		if from.IP.Equal(f.server.IP) && from.Port != f.server.Port {
			if old := cs.learned.Load(); old == nil || old.Port != from.Port {
				cs.learned.Store(from)
				if old == nil {
					close(cs.answered)
				}
			}
		}
	}
}

// route returns the socket a datagram leaves from and where it goes; false
// when it cannot be sent (the server's datagrams, the server not being on
// this machine).
func (f *Fleet) route(d Datagram) (*net.UDPConn, *net.UDPAddr, bool) {
	if d.Server && !(f.local && f.serverSide) {
		return nil, nil, false
	}
	cs, err := f.sockets(d.Conv)
	if err != nil {
		return nil, nil, false
	}
	switch {
	case d.Server:
		return cs.server, cs.client.LocalAddr().(*net.UDPAddr), true
	case d.Listen:
		return cs.client, f.server, true
	case cs.server != nil:
		return cs.client, cs.server.LocalAddr().(*net.UDPAddr), true
	}
	if to := cs.learned.Load(); to != nil {
		return cs.client, to, true
	}
	if !cs.waited {
		cs.waited = true
		t := time.NewTimer(answerWait)
		select {
		case <-cs.answered:
		case <-t.C:
		}
		t.Stop()
		if to := cs.learned.Load(); to != nil {
			return cs.client, to, true
		}
	}
	return cs.client, f.server, true
}

// drain counts the errors the network reported to every socket.
func (f *Fleet) drain(st *Stats) {
	f.mu.Lock()
	socks := f.socks
	f.mu.Unlock()
	for _, c := range socks {
		drainErrors(c, func(errno syscall.Errno) {
			err := fmt.Errorf("%v reported for a datagram to %v: %w", errno, f.server, errno)
			switch errno {
			case syscall.ECONNREFUSED:
				st.Refused++
			case syscall.EHOSTUNREACH, syscall.ENETUNREACH, syscall.EHOSTDOWN, syscall.ENETDOWN:
				st.NoRoute++
			default:
				st.Other++
			}
			st.LastErr = err
		})
	}
}
