package reassemble_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/klauspost/compress/zlib"

	"github.com/pmdump/pmdump/internal/diftest"
	"github.com/pmdump/pmdump/reassemble"
	"github.com/pmdump/pmdump/statedif"
)

// stateSize is the modern era's state size (the seeds').
const stateSize = diftest.StateSize

// Test clients.
var (
	client1 = netip.MustParseAddrPort("10.0.0.2:24785")
	client2 = netip.MustParseAddrPort("10.0.0.3:24785")
)

// t0 is the capture time of the first piece in the tests.
var t0 = time.Date(2024, 2, 20, 12, 0, 0, 0, time.UTC)

// deflate zlib-compresses b at level.
var deflate = diftest.Deflate

// realisticDif returns a dif the size of a state that looks like the game's
// (diftest.Realistic), and compressed at the game's default level.
func realisticDif(t testing.TB, seed uint64) (dif, z []byte) {
	t.Helper()
	dif = diftest.Realistic(seed)
	return dif, deflate(t, dif, statedif.ZlibLevel)
}

// streamOfSize returns a valid zlib stream of exactly n compressed bytes
// (n >= 11) and what it inflates to: random, incompressible bytes stored
// without compression, so the stream's size can be chosen to the byte.
func streamOfSize(t testing.TB, n int, seed uint64) (plain, z []byte) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 2))
	m := n - 11 // zlib header 2, stored block header 5, adler32 4
	for range 4 {
		plain = make([]byte, m)
		for i := range plain {
			plain[i] = byte(r.Uint32())
		}
		z = deflate(t, plain, zlib.NoCompression)
		if len(z) == n {
			return plain, z
		}
		m += n - len(z)
	}
	t.Fatalf("cannot make a zlib stream of exactly %d bytes (got %d)", n, len(z))
	return nil, nil
}

// split cuts a compressed dif into pieces the way the game does: 1000 bytes
// each, count = size/1000 + 1, so a size that is a multiple of 1000 ends with
// an empty piece.
func split(k reassemble.Key, z []byte) []reassemble.Piece {
	count := len(z)/1000 + 1
	ps := make([]reassemble.Piece, count)
	for i := range ps {
		lo, hi := min(i*1000, len(z)), min((i+1)*1000, len(z))
		ps[i] = reassemble.Piece{Key: k, Seq: i, Count: count, Start: lo, Data: z[lo:hi]}
	}
	return ps
}

// key is a test key of client1 in level sequence 0.
func key(src, dst int32) reassemble.Key {
	return reassemble.Key{Client: client1, SLSN: 0, Src: src, Dst: dst}
}

// collector records the messages an Assembler emits and checks that no
// message is emitted twice.
type collector struct {
	t    testing.TB
	msgs []*reassemble.Message
	seen map[reassemble.Key]int
}

func newCollector(t testing.TB) *collector {
	return &collector{t: t, seen: map[reassemble.Key]int{}}
}

func (c *collector) emit(m *reassemble.Message) {
	c.seen[m.Key]++
	if c.seen[m.Key] > 1 {
		c.t.Errorf("%v emitted %d times", m.Key, c.seen[m.Key])
	}
	c.msgs = append(c.msgs, m)
}

// byKey returns the message emitted for k, failing the test if there is none.
func (c *collector) byKey(k reassemble.Key) *reassemble.Message {
	c.t.Helper()
	for _, m := range c.msgs {
		if m.Key == k {
			return m
		}
	}
	c.t.Fatalf("%v never emitted (emitted: %v)", k, c.keys())
	return nil
}

func (c *collector) keys() string {
	var b bytes.Buffer
	for _, m := range c.msgs {
		fmt.Fprintf(&b, "%v:%v ", m.Key, m.Status)
	}
	return b.String()
}
