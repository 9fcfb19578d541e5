package engine

import "testing"

// difBuffers gives buffers of the power of two at or above the size asked,
// gives back those it was given back, the last first, and keeps no more
// than its bound.
func TestDifBuffers(t *testing.T) {
	for _, c := range []struct{ n, cap int }{{0, 256}, {1, 256}, {256, 256}, {257, 512}, {700, 1024}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 1}} {
		var d difBuffers
		if got := cap(d.get(c.n)); got != c.cap {
			t.Errorf("get(%d) has room for %d bytes, want %d", c.n, got, c.cap)
		}
	}
	var d difBuffers
	a, b := d.get(600), d.get(600)
	d.put(a)
	d.put(b)
	d.put(make([]byte, 1000)) // not one of its sizes
	d.put(nil)
	if got := d.get(1000); &got[:1][0] != &b[:1][0] {
		t.Error("get after put did not give back the last buffer put")
	}
	if got := d.get(513); &got[:1][0] != &a[:1][0] {
		t.Error("get after put did not give back the first buffer put")
	}
	if got := d.get(1000); &got[:1][0] == &a[:1][0] || &got[:1][0] == &b[:1][0] {
		t.Error("a buffer was given out twice")
	}
	for range 2 * maxFreeDifBytes / (64 << 10) {
		d.put(make([]byte, 64<<10))
	}
	if d.bytes > maxFreeDifBytes {
		t.Errorf("%d bytes wait, more than the bound of %d", d.bytes, maxFreeDifBytes)
	}
}
