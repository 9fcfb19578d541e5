package replay_test

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/pmdump/pmdump/internal/diftest"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/replay"
	"github.com/pmdump/pmdump/statedif"
)

// stateSize is the modern era's state size (the seeds').
const stateSize = diftest.StateSize

// Test clients.
var (
	client1 = netip.MustParseAddrPort("10.0.0.2:24785")
	client2 = netip.MustParseAddrPort("10.0.0.3:24786")
	client3 = netip.MustParseAddrPort("10.0.0.4:24787")
)

// t0 is the capture time of the first dif in the tests.
var t0 = time.Date(2024, 2, 20, 12, 0, 0, 0, time.UTC)

// firstState returns a plausible state: zeros with a few random regions.
func firstState(r *rand.Rand, size int) []byte {
	s := make([]byte, size)
	for range 40 {
		i := r.IntN(size - 64)
		for k := range 64 {
			s[i+k] = byte(r.Uint32())
		}
	}
	return s
}

// mutate returns a copy of s with a few bytes changed, as a frame of play
// changes a state.
func mutate(r *rand.Rand, s []byte) []byte {
	n := bytes.Clone(s)
	for range 1 + r.IntN(60) {
		n[r.IntN(len(n))] = byte(r.Uint32())
	}
	return n
}

// difOf is the server's dif: base − new, bytewise. A nil base is all zeros.
var difOf = diftest.Dif

// deflate zlib-compresses b at the game's default level.
func deflate(t testing.TB, b []byte) []byte { return diftest.Deflate(t, b, statedif.ZlibLevel) }

// msg makes a Complete message of client that rebuilds next from base
// (frame src; nil base and src 0 for a keyframe).
func msg(t testing.TB, client netip.AddrPort, slsn int, src, dst int32, base, next []byte) *reassemble.Message {
	t.Helper()
	z := deflate(t, difOf(base, next))
	count := len(z)/1000 + 1
	return &reassemble.Message{
		Key:    reassemble.Key{Client: client, SLSN: slsn, Src: src, Dst: dst},
		Status: reassemble.Complete, Count: count, Pieces: count, Compressed: z,
		FirstN: int(dst), LastN: int(dst), First: t0.Add(time.Duration(dst) * 25 * time.Millisecond), Last: t0.Add(time.Duration(dst) * 25 * time.Millisecond),
	}
}

// failed makes a message that ended with status st (Incomplete or Corrupt).
func failed(client netip.AddrPort, slsn int, src, dst int32, st reassemble.Status) *reassemble.Message {
	return &reassemble.Message{
		Key:    reassemble.Key{Client: client, SLSN: slsn, Src: src, Dst: dst},
		Status: st, Count: 3, Pieces: 2, Missing: []int{1}, Err: errFailed,
		Last: t0.Add(time.Duration(dst) * 25 * time.Millisecond), LastN: int(dst),
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errFailed = testError("pieces went missing")

// rebuild runs messages through a Builder and returns the states in the
// order emitted, with their sha256.
func rebuild(opt replay.Options, msgs ...*reassemble.Message) []*replay.State {
	opt.SHA256 = true
	var out []*replay.State
	b := replay.New(opt, func(s *replay.State) { out = append(out, s) })
	for _, m := range msgs {
		b.Add(m)
	}
	b.Close()
	return out
}

// ln is a client's line in conversation 0.
func ln(c netip.AddrPort) reassemble.Chain { return reassemble.Chain{Client: c} }
