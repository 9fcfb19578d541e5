package synth

import (
	"bufio"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pmdump/pmdump/decode"
)

// ServerRow is one dif the server made and sent (including difs whose
// pieces were then lost), as in the real server ground truth.
type ServerRow struct {
	Player         int
	Src, Dst       int32
	CompressedSize int
	Pieces         int
	SHA256         [32]byte // of the full dst state
	SLSN           int      // level-sequence number at send time (modern era)
	Level          int
}

// ClientRow is one dif a client applied, as in the real client ground truth.
type ClientRow struct {
	Player   int
	Dst, Src int32
	SHA256   [32]byte // of the full state after applying the dif
	SLSN     int
	Level    int
}

// TruthSink receives the ground truth while Generate runs.
type TruthSink interface {
	// ServerDif is called for every dif the server sends.
	ServerDif(r ServerRow) error
	// ClientApplied is called for every dif a client applies.
	ClientApplied(r ClientRow) error
}

// Truth collects the ground truth in memory. It is meant for tests and
// short captures; use a CSVWriter to stream long ones to disk.
type Truth struct {
	Era     decode.Version
	Players int                 // number of clients (players 1..Players)
	Server  []ServerRow         // in the order the difs were sent
	Clients map[int][]ClientRow // by player number, in the order applied
}

// NewTruth returns an empty Truth for a game of cfg.
func NewTruth(cfg Config) *Truth {
	return &Truth{Era: cfg.Era, Players: cfg.Players, Clients: map[int][]ClientRow{}}
}

// ServerDif records a server row.
func (t *Truth) ServerDif(r ServerRow) error {
	t.Server = append(t.Server, r)
	return nil
}

// ClientApplied records a client row.
func (t *Truth) ClientApplied(r ClientRow) error {
	t.Clients[r.Player] = append(t.Clients[r.Player], r)
	return nil
}

// WriteCSV writes the ground-truth CSV files beside the capture at
// capturePath (see TruthPaths).
func (t *Truth) WriteCSV(capturePath string) error {
	w, err := NewCSVWriter(capturePath, t.Era, t.Players)
	if err != nil {
		return err
	}
	for _, r := range t.Server {
		if err := w.ServerDif(r); err != nil {
			w.Close()
			return err
		}
	}
	for p := 1; p <= t.Players; p++ {
		for _, r := range t.Clients[p] {
			if err := w.ClientApplied(r); err != nil {
				w.Close()
				return err
			}
		}
	}
	return w.Close()
}

// TruthPaths returns the ground-truth file names for a capture: for
// dir/name.ext, dir/name_server_gt.csv and dir/name_cN_client_gt.csv for
// players N = 1..players.
func TruthPaths(capturePath string, players int) (server string, clients []string) {
	dir, file := filepath.Split(capturePath)
	base := strings.TrimSuffix(file, filepath.Ext(file))
	server = filepath.Join(dir, base+"_server_gt.csv")
	for n := 1; n <= players; n++ {
		clients = append(clients, filepath.Join(dir, base+"_c"+strconv.Itoa(n)+"_client_gt.csv"))
	}
	return server, clients
}

// CSV headers of the real ground truth, per era.
const (
	legacyServerHeader = "player,src,dst,compressed_size,num_pieces,dst_state_sha256"
	modernServerHeader = "player,src,dst,compressed_size,num_pieces,sha256_of_dst_state,slsn,level"
	legacyClientHeader = "dst_frame,src_frame,sha256"
	modernClientHeader = "dst_frame,src_frame,sha256,slsn,level"
)

// CSVWriter streams the ground truth to CSV files in the formats of the real
// captures' ground truth. It creates every file up front (a client that
// applies nothing gets a header-only file) and must be closed.
type CSVWriter struct {
	era     decode.Version
	files   []*os.File
	server  *bufio.Writer
	clients []*bufio.Writer // index player-1
	line    []byte
}

// NewCSVWriter creates the ground-truth files for a capture at capturePath
// (see TruthPaths) for a game of the given era with players clients.
func NewCSVWriter(capturePath string, era decode.Version, players int) (*CSVWriter, error) {
	w := &CSVWriter{era: era}
	sp, cps := TruthPaths(capturePath, players)
	sh, ch := legacyServerHeader, legacyClientHeader
	if era.LevelSeqOn(decode.KindDifPiece) {
		sh, ch = modernServerHeader, modernClientHeader
	}
	open := func(path, header string) (*bufio.Writer, error) {
		f, err := os.Create(path)
		if err != nil {
			return nil, fmt.Errorf("ground truth: %w", err)
		}
		w.files = append(w.files, f)
		b := bufio.NewWriterSize(f, 1<<16)
		b.WriteString(header)
		b.WriteByte('\n')
		return b, nil
	}
	var err error
	if w.server, err = open(sp, sh); err != nil {
		w.Close()
		return nil, err
	}
	for _, p := range cps {
		b, err := open(p, ch)
		if err != nil {
			w.Close()
			return nil, err
		}
		w.clients = append(w.clients, b)
	}
	return w, nil
}

// ServerDif writes one server row.
func (w *CSVWriter) ServerDif(r ServerRow) error {
	b := w.line[:0]
	b = strconv.AppendInt(b, int64(r.Player), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Src), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Dst), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.CompressedSize), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Pieces), 10)
	b = append(b, ',')
	return w.finish(w.server, b, r.SHA256, r.SLSN, r.Level)
}

// finish appends the sha256 and, in the versions whose difs carry the
// level sequence, the slsn and level
// columns to a row and writes it.
func (w *CSVWriter) finish(to io.Writer, b []byte, sum [32]byte, slsn, level int) error {
	b = hex.AppendEncode(b, sum[:])
	if w.era.LevelSeqOn(decode.KindDifPiece) {
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(slsn), 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, int64(level), 10)
	}
	b = append(b, '\n')
	w.line = b
	if _, err := to.Write(b); err != nil {
		return fmt.Errorf("ground truth: %w", err)
	}
	return nil
}

// ClientApplied writes one client row to that player's file.
func (w *CSVWriter) ClientApplied(r ClientRow) error {
	if r.Player < 1 || r.Player > len(w.clients) {
		return fmt.Errorf("ground truth: no file for player %d", r.Player)
	}
	b := w.line[:0]
	b = strconv.AppendInt(b, int64(r.Dst), 10)
	b = append(b, ',')
	b = strconv.AppendInt(b, int64(r.Src), 10)
	b = append(b, ',')
	return w.finish(w.clients[r.Player-1], b, r.SHA256, r.SLSN, r.Level)
}

// Close flushes and closes every file; it reports every error it met.
func (w *CSVWriter) Close() error {
	var errs []error
	bufs := append([]*bufio.Writer{w.server}, w.clients...)
	for _, b := range bufs {
		if b != nil {
			if err := b.Flush(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, f := range w.files {
		if err := f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	w.files, w.server, w.clients = nil, nil, nil
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("ground truth: %w", err)
	}
	return nil
}
