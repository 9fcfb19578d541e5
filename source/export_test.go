package source

import "bytes"

// NewPcapAt reads the pcap capture in data the way a pcap file is read,
// refilling its window window bytes at a time, for tests that compare it
// with the stream reader.
func NewPcapAt(data []byte, name string, window int) (*Reader, bool) {
	return newPcapAt(bytes.NewReader(data), int64(len(data)), name, window)
}

// SetMinPcapFile sets the smallest file OpenPcapFile takes, and returns a
// function that restores it.
func SetMinPcapFile(n int64) (restore func()) {
	old := minPcapFile
	minPcapFile = n
	return func() { minPcapFile = old }
}

// WindowCap is the capacity of the window of a pcap file r reads; -1 when
// r does not read one.
func WindowCap(r *Reader) int {
	p, ok := r.src.(*pcapFile)
	if !ok {
		return -1
	}
	return cap(p.buf)
}
