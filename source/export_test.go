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
