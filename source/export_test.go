package source

// NewMappedReader reads the pcap capture in data the way a mapped file is
// read, for tests that compare it with the stream reader.
func NewMappedReader(data []byte, name string) (*Reader, bool) { return newMappedReader(data, name) }

// SetMinMapped sets the smallest file OpenMapped maps, and returns a
// function that restores it.
func SetMinMapped(n int64) (restore func()) {
	old := minMapped
	minMapped = n
	return func() { minMapped = old }
}

// Released is how many bytes from the start of a mapped file r has given
// back to the system; -1 when r does not read a mapped file.
func Released(r *Reader) int {
	m, ok := r.src.(*mappedPcap)
	if !ok {
		return -1
	}
	return m.released
}
