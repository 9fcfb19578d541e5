package engine

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/pmdump/pmdump/captures"
	"github.com/pmdump/pmdump/source"
)

// Input is one capture opened for an engine: a file, standard input or a
// bundled sample, with how many of its bytes have been read.
type Input struct {
	Name   string
	Path   string      // the file's path, when the input is a regular file
	Stat   os.FileInfo // the file's, when Path is set
	Reader *source.Reader
	Size   int64 // bytes in all, 0 when unknown (a stream)
	read   *countingReader
	file   *os.File
}

// Read is how many bytes of the input have been read so far.
func (in *Input) Read() int64 {
	if in.read == nil { // a pcap file read by positioned reads: its reader counts
		done, _ := in.Reader.Progress()
		return done
	}
	return in.read.n.Load()
}

// Close closes the input's file.
func (in *Input) Close() error {
	if in.file != nil && in.file != os.Stdin {
		return in.file.Close()
	}
	if in.Reader != nil {
		return in.Reader.Close() // a pcap file: its reader closes it
	}
	return nil
}

type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// OpenInput opens a capture file by name: "-" is standard input and
// "sample:NAME" a bundled sample capture (see package captures). Gzip
// compression is recognised and undone on the fly.
func OpenInput(name string) (*Input, error) {
	in := &Input{Name: name}
	var r io.Reader
	switch {
	case strings.HasPrefix(name, "sample:"):
		data, err := captures.Sample(strings.TrimPrefix(name, "sample:"))
		if err != nil {
			return nil, err
		}
		r, in.Size = bytes.NewReader(data), int64(len(data))
	case name == "-":
		in.file, r = os.Stdin, os.Stdin
	default:
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if st.IsDir() {
			f.Close()
			return nil, fmt.Errorf("%s is a directory, not a capture file", name)
		}
		if st.Mode().IsRegular() {
			in.Size, in.Path, in.Stat = st.Size(), name, st
		}
		if rd, ok := source.OpenPcapFile(f, name); ok {
			in.Reader = rd // it closes f
			return in, nil
		}
		in.file, r = f, f
	}
	in.read = &countingReader{r: r}
	label := name
	if name == "-" {
		label = "stdin"
	}
	rd, err := source.NewReader(in.read, label)
	if err != nil {
		in.Close()
		return nil, err
	}
	in.Reader = rd
	return in, nil
}
