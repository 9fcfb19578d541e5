package main

//go:generate go run . versions --markdown -o ../../docs/versions.md

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/pmdump/pmdump/decode"
)

// versionsDoc is where the page of pmdump versions --markdown lives, from
// the clone's root, and the command that writes it again.
const (
	versionsDoc      = "docs/versions.md"
	versionsGenerate = "go generate ./cmd/pmdump"
)

func newVersionsCmd() *cobra.Command {
	var jsonOut, markdown bool
	var out string
	c := &cobra.Command{
		Use:   "versions [flags] [NAME...]",
		Short: "List the wire versions of the game pmdump speaks",
		Long: `Versions lists every wire version of the game that pmdump knows (a range of
builds whose netgames talk to each other), oldest first, from pmdump's own
registry of versions: the names --era takes, and what tells them apart.

Without NAME it prints one line per version: its name, the dates of its first
and last builds, the byte order of its integers, whether a client starts with
the 1234/5678 handshake, whether the server answers each client from a socket
of its own (one per client) or everything from its listening port (one
shared), the piece size of difs and files, the sizes of its states, the
packets that carry the level sequence, its sync model and its drop rule.

With NAME (a version's name or alias, as --era takes them) it prints a block
per version named, in the order given: its builds, what changed on the wire
from the version before, how pmdump tells it from the bytes, the facts of the
table in full, and every packet it has (direction, kind, length, the version
that introduced that layout, what it is).

--json prints one JSON object per version and line: name, aliases, label,
first and last (date, commit, pm_version), changes, tells, big_endian,
byte_order, handshake, shared_server_socket, ephemeral_client_port,
piece_size, state_sizes, state_level_seq (its byte offset in a state, null
when the state holds none), level_seq_packets, sync, dif_every, drop (frames,
after, grace, ack, ack_kind, reason, reason_name), clients_save_files,
log_always, file_blob (0: the file's size + 128; -1: either, the version
changed it; else that fixed size; null without file transfers), menu_value
(null: the menu bit of the controls), prior (ties go to the higher),
same_packets_as, and packets (name, kind, dir, min_len, max_len (null:
unbounded), level_seq, since, doc).

--markdown prints the page docs/versions.md is (go generate ./cmd/pmdump
writes it again). -o FILE writes to FILE instead of standard output.

An unknown NAME is a usage error (exit 1) that lists the names.`,
		Example: `  pmdump versions
  pmdump versions 2026-07
  pmdump versions legacy modern
  pmdump versions --json | jq -c '{name, piece_size, state_sizes}'
  pmdump versions --json head | jq -r '.packets[] | select(.level_seq) | .name'
  pmdump versions --markdown -o docs/versions.md`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonOut && markdown {
				return usagef("--json and --markdown: give one of them")
			}
			vs, err := pickVersions(args)
			if err != nil {
				return err
			}
			write := func(w io.Writer) error {
				switch {
				case jsonOut:
					return writeVersionsJSON(w, vs)
				case markdown:
					return writeVersionsMarkdown(w, vs)
				case len(args) > 0:
					return writeVersionsDetail(w, vs)
				}
				return writeVersionsTable(w, vs)
			}
			return writeOutput(cmd, out, write)
		},
	}
	c.Flags().BoolVar(&jsonOut, "json", false, "print one JSON object per version")
	c.Flags().BoolVar(&markdown, "markdown", false, "print the Markdown page of the versions ("+versionsDoc+")")
	c.Flags().StringVarP(&out, "output", "o", "", "write to `FILE` (default: standard output)")
	return c
}

// pickVersions returns the versions named (by name or alias), in the order
// given and each once, or every version, oldest first, when none is named.
func pickVersions(names []string) ([]decode.Version, error) {
	if len(names) == 0 {
		return decode.Versions(), nil
	}
	var vs []decode.Version
	for _, n := range names {
		v, err := decode.ParseVersion(n)
		if err != nil || !v.Known() {
			return nil, usagef("no version %q: the versions are %s", n, strings.Join(decode.VersionNames(), ", "))
		}
		if !slices.Contains(vs, v) {
			vs = append(vs, v)
		}
	}
	return vs, nil
}

// writeOutput writes what write writes to standard output, or to the file
// out when one is given.
func writeOutput(cmd *cobra.Command, out string, write func(io.Writer) error) error {
	if out == "" {
		w := bufio.NewWriter(cmd.OutOrStdout())
		if err := write(w); err != nil {
			return fmt.Errorf("versions: %w", err)
		}
		return w.Flush()
	}
	f, err := os.Create(out)
	if err != nil {
		return usagef("-o: %v", err)
	}
	w := bufio.NewWriter(f)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("versions: writing %s: %w", out, err)
	}
	return nil
}

// The facts of a version, in words, from the registry.

// builds is the span of the version's builds: "first–last" dates, or the
// one date.
func builds(vi *decode.VersionInfo) string {
	if vi.First.Date == vi.Last.Date {
		return vi.First.Date
	}
	return vi.First.Date + "–" + vi.Last.Date
}

// build names one build: its date, then its commit and version string when
// known.
func build(b decode.Build) string {
	var more []string
	for _, s := range []string{b.Commit, b.PMVersion} {
		if s != "" {
			more = append(more, s)
		}
	}
	if len(more) == 0 {
		return b.Date
	}
	return b.Date + " (" + strings.Join(more, ", ") + ")"
}

// byteOrder is "big-endian" or "little-endian".
func byteOrder(v decode.Version) string {
	if v.Info().BigEndian {
		return "big-endian"
	}
	return "little-endian"
}

// yesNo is "yes" or "no".
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// serverSocket says from how many sockets the server sends.
func serverSocket(vi *decode.VersionInfo) string {
	if vi.SharedServerSocket {
		return "one shared"
	}
	return "one per client"
}

// stateSizes lists the sizes of the version's states.
func stateSizes(vi *decode.VersionInfo, sep string) string {
	s := make([]string, len(vi.StateSizes))
	for i, n := range vi.StateSizes {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, sep)
}

// levelSeqPackets are the names of the version's packets that carry the
// level sequence, in table order.
func levelSeqPackets(v decode.Version) []string {
	out := []string{}
	for _, l := range v.Layouts() {
		if l.FieldByRole(decode.RoleLevelSeq) >= 0 {
			out = append(out, l.Name)
		}
	}
	return out
}

// kindNames are the names of the version's packets of the given kinds, in
// table order.
func kindNames(v decode.Version, kinds ...decode.Kind) []string {
	var out []string
	for _, l := range v.Layouts() {
		if slices.Contains(kinds, l.Kind) {
			out = append(out, l.Name)
		}
	}
	return out
}

// ackName is the name of the packet the version's drop rule waits for.
func ackName(v decode.Version) string {
	if l := v.Kind(v.Drop().Ack); l != nil {
		return l.Name
	}
	return v.Drop().Ack.String()
}

// dropShort is the drop rule in a table cell.
func dropShort(v decode.Version) string {
	return fmt.Sprintf("no %s for %d frames", ackName(v), v.Drop().Frames)
}

// dropLong is the drop rule in full.
func dropLong(v decode.Version) string {
	d := v.Drop()
	s := fmt.Sprintf("after %d frames without a %s (%s)", d.Frames, ackName(v), d.Ack)
	if d.After > 0 {
		s += fmt.Sprintf(", checked from frame %d of a level", d.After)
	}
	if d.Grace > 0 {
		s += fmt.Sprintf("; a client that joins has %d frames more", d.Grace)
	}
	s += fmt.Sprintf("; the player's state becomes %d", d.Reason)
	if ev, ok := decode.PlayerStates.Lookup(int64(d.Reason)); ok {
		s += " (" + ev.Name + ")"
	}
	return s
}

// syncLong is the sync model and how often the server sends a dif.
func syncLong(v decode.Version) string {
	vi := v.Info()
	every := "every frame"
	if vi.DifEvery > 1 {
		every = fmt.Sprintf("every %d frames", vi.DifEvery)
	}
	to := "to the clients in turn"
	if vi.Sync == decode.Rewind {
		to = "to every client"
	}
	s := vi.Sync.String()
	if names := kindNames(v, decode.KindGameMoves, decode.KindGameMovesAck, decode.KindLateInput); len(names) > 0 {
		s += " (" + strings.Join(names, ", ") + ")"
	}
	return s + "; a dif " + every + " " + to
}

// levelSeqLong says where the level sequence is: which packets, and where
// in the state.
func levelSeqLong(v decode.Version) string {
	s := "not on the wire"
	if names := levelSeqPackets(v); len(names) > 0 {
		s = "on the wire in " + strings.Join(names, ", ")
	}
	if off := v.Info().StateLevelSeq; off >= 0 {
		return s + fmt.Sprintf("; in the state at byte %d (the first player's record)", off)
	}
	return s + "; not in the state"
}

// handshakeLong says whether a client starts with the handshake, and its
// packets.
func handshakeLong(v decode.Version) string {
	names := kindNames(v, decode.KindHandshake, decode.KindHandshakeReply)
	if len(names) == 0 {
		return "no"
	}
	return "yes (" + strings.Join(names, ", ") + ")"
}

// fileBlob says what a file transfer inflates to, "" for a version without
// file transfers.
func fileBlob(v decode.Version) string {
	if !v.Has(decode.KindFilePiece) {
		return ""
	}
	sized := fmt.Sprintf("the file's size + %d (a name field, then the file)", decode.FileNameSize)
	switch n := v.Info().FileBlob; {
	case n == 0:
		return sized
	case n < 0:
		return fmt.Sprintf("either, as the builds changed it: %s, or a fixed %d bytes", sized, decode.FixedFileBlob)
	default:
		return fmt.Sprintf("a fixed %d bytes (the name, the file, then whatever the server's buffer held)", n)
	}
}

// menu says how a player in the game's menu shows in its controls.
func menu(v decode.Version) string {
	if n := v.Info().MenuValue; n != 0 {
		return fmt.Sprintf("the control value %d", n)
	}
	return "the menu bit of the controls"
}

// siblings are the names of the other versions with the same packets.
func siblings(v decode.Version) []string {
	out := []string{}
	for _, w := range v.Siblings().Versions() {
		if w != v {
			out = append(out, w.String())
		}
	}
	return out
}

// packetLen is the lengths a packet's payload has: "24", "21–25", "18+".
func packetLen(l *decode.Layout) string {
	switch {
	case l.MaxLen() < 0:
		return strconv.Itoa(l.MinLen()) + "+"
	case l.MaxLen() == l.MinLen():
		return strconv.Itoa(l.MinLen())
	}
	return fmt.Sprintf("%d–%d", l.MinLen(), l.MaxLen())
}

// fact is one labelled fact of a version.
type fact struct{ label, text string }

// versionFacts are the facts of a version, in words, as the detailed text
// and the Markdown page give them.
func versionFacts(v decode.Version) []fact {
	vi := v.Info()
	fs := []fact{}
	add := func(label, text string) {
		if text != "" {
			fs = append(fs, fact{label, text})
		}
	}
	if len(vi.Aliases) > 0 {
		add("also named", strings.Join(vi.Aliases, ", "))
	}
	add("first build", build(vi.First))
	add("last build", build(vi.Last))
	add("what changed", vi.Changes)
	add("how pmdump tells it", vi.Tells)
	add("byte order", byteOrder(v))
	add("handshake", handshakeLong(v))
	add("server socket", serverSocket(vi))
	if vi.EphemeralClientPort {
		add("client port", "a port of the client's own choosing")
	} else {
		add("client port", "the game's port")
	}
	add("piece size", fmt.Sprintf("%d bytes", vi.PieceSize))
	add("state size", stateSizes(vi, " or ")+" bytes")
	add("level sequence", levelSeqLong(v))
	add("sync", syncLong(v))
	add("drop rule", dropLong(v))
	add("menu", menu(v))
	add("file transfer", fileBlob(v))
	if v.Has(decode.KindFileRequest) {
		add("clients save files", yesNo(vi.ClientsSaveFiles)+" (they ask for the game-moves file by themselves at each level's end, when the game's settings say so)")
	}
	if names := kindNames(v, decode.KindLog); len(names) > 0 {
		if vi.LogAlways {
			add("client logs", "every client sends a "+names[0]+" for every netgame log line, whatever its settings")
		} else {
			add("client logs", "a client sends a "+names[0]+" when its settings say so")
		}
	}
	if s := siblings(v); len(s) > 0 {
		add("same packets as", strings.Join(s, ", "))
	}
	add("packets", strconv.Itoa(len(v.Layouts())))
	return fs
}

// writeVersionsTable writes one aligned line per version.
func writeVersionsTable(w io.Writer, vs []decode.Version) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "version\tbuilds\tbyte order\thandshake\tserver socket\tpiece\tstate\tlevel seq on the wire\tsync\tdrop\n")
	for _, v := range vs {
		vi := v.Info()
		seq := strings.Join(levelSeqPackets(v), ",")
		if seq == "" {
			seq = "none"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", v, builds(vi), byteOrder(v),
			yesNo(v.Has(decode.KindHandshake)), serverSocket(vi), vi.PieceSize, stateSizes(vi, ","), seq, vi.Sync, dropShort(v))
	}
	return tw.Flush()
}

// detailWidth is the width the detailed text wraps at.
const detailWidth = 80

// writeVersionsDetail writes a block per version: its facts, then its
// packets.
func writeVersionsDetail(w io.Writer, vs []decode.Version) error {
	for i, v := range vs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s\n", v.Label())
		fs := versionFacts(v)
		width := 0
		for _, f := range fs {
			width = max(width, len(f.label))
		}
		indent := strings.Repeat(" ", 2+width+2)
		for _, f := range fs {
			for j, line := range wrap(f.text, detailWidth-len(indent)) {
				if j == 0 {
					fmt.Fprintf(w, "  %-*s  %s\n", width, f.label, line)
				} else {
					fmt.Fprintf(w, "%s%s\n", indent, line)
				}
			}
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "    packet\tdir\tkind\tbytes\tsince\twhat it is\n")
		for _, l := range v.Layouts() {
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\t%s\n", l.Name, l.Dir.Arrow(), l.Kind, packetLen(l), l.First(), l.Doc)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// wrap cuts text into lines of at most width runes, at spaces (a longer
// word gets a line of its own).
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		switch {
		case line == "":
			line = word
		case len([]rune(line))+1+len([]rune(word)) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// versionJSON is the --json form of a version.
type versionJSON struct {
	Name                string       `json:"name"`
	Aliases             []string     `json:"aliases"`
	Label               string       `json:"label"`
	First               buildJSON    `json:"first"`
	Last                buildJSON    `json:"last"`
	Changes             string       `json:"changes"`
	Tells               string       `json:"tells"`
	BigEndian           bool         `json:"big_endian"`
	ByteOrder           string       `json:"byte_order"`
	Handshake           bool         `json:"handshake"`
	SharedServerSocket  bool         `json:"shared_server_socket"`
	EphemeralClientPort bool         `json:"ephemeral_client_port"`
	PieceSize           int          `json:"piece_size"`
	StateSizes          []int        `json:"state_sizes"`
	StateLevelSeq       *int         `json:"state_level_seq"`
	LevelSeqPackets     []string     `json:"level_seq_packets"`
	Sync                string       `json:"sync"`
	DifEvery            int          `json:"dif_every"`
	Drop                dropJSON     `json:"drop"`
	ClientsSaveFiles    bool         `json:"clients_save_files"`
	LogAlways           bool         `json:"log_always"`
	FileBlob            *int         `json:"file_blob"`
	MenuValue           *int64       `json:"menu_value"`
	Prior               int          `json:"prior"`
	SamePacketsAs       []string     `json:"same_packets_as"`
	Packets             []packetJSON `json:"packets"`
}

type buildJSON struct {
	Date      string `json:"date"`
	Commit    string `json:"commit"`
	PMVersion string `json:"pm_version"`
}

type dropJSON struct {
	Frames     int    `json:"frames"`
	After      int    `json:"after"`
	Grace      int    `json:"grace"`
	Ack        string `json:"ack"`
	AckKind    string `json:"ack_kind"`
	Reason     int    `json:"reason"`
	ReasonName string `json:"reason_name"`
}

type packetJSON struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Dir      string `json:"dir"`
	MinLen   int    `json:"min_len"`
	MaxLen   *int   `json:"max_len"`
	LevelSeq bool   `json:"level_seq"`
	Since    string `json:"since"`
	Doc      string `json:"doc"`
}

// versionToJSON is the --json form of v.
func versionToJSON(v decode.Version) versionJSON {
	vi := v.Info()
	d := vi.Drop
	reason, _ := decode.PlayerStates.Lookup(int64(d.Reason))
	j := versionJSON{
		Name: vi.Name, Aliases: append([]string{}, vi.Aliases...), Label: v.Label(),
		First: buildJSON(vi.First), Last: buildJSON(vi.Last), Changes: vi.Changes, Tells: vi.Tells,
		BigEndian: vi.BigEndian, ByteOrder: byteOrder(v), Handshake: v.Has(decode.KindHandshake),
		SharedServerSocket: vi.SharedServerSocket, EphemeralClientPort: vi.EphemeralClientPort,
		PieceSize: vi.PieceSize, StateSizes: append([]int{}, vi.StateSizes...), LevelSeqPackets: levelSeqPackets(v),
		Sync: vi.Sync.String(), DifEvery: vi.DifEvery,
		Drop: dropJSON{Frames: d.Frames, After: d.After, Grace: d.Grace, Ack: ackName(v), AckKind: d.Ack.String(),
			Reason: d.Reason, ReasonName: reason.Name},
		ClientsSaveFiles: vi.ClientsSaveFiles, LogAlways: vi.LogAlways, Prior: vi.Prior,
		SamePacketsAs: siblings(v), Packets: []packetJSON{},
	}
	if vi.StateLevelSeq >= 0 {
		off := vi.StateLevelSeq
		j.StateLevelSeq = &off
	}
	if v.Has(decode.KindFilePiece) {
		n := vi.FileBlob
		j.FileBlob = &n
	}
	if vi.MenuValue != 0 {
		m := vi.MenuValue
		j.MenuValue = &m
	}
	for _, l := range v.Layouts() {
		p := packetJSON{Name: l.Name, Kind: l.Kind.String(), Dir: l.Dir.String(), MinLen: l.MinLen(),
			LevelSeq: l.FieldByRole(decode.RoleLevelSeq) >= 0, Since: l.First().String(), Doc: l.Doc}
		if n := l.MaxLen(); n >= 0 {
			p.MaxLen = &n
		}
		j.Packets = append(j.Packets, p)
	}
	return j
}

// writeVersionsJSON writes one JSON object per version and line.
func writeVersionsJSON(w io.Writer, vs []decode.Version) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, v := range vs {
		if err := enc.Encode(versionToJSON(v)); err != nil {
			return fmt.Errorf("%s: %w", v, err)
		}
	}
	return nil
}

// writeVersionsMarkdown writes the page of the versions: a title, how
// pmdump tells them apart, a table of them all, then a section per
// version.
func writeVersionsMarkdown(w io.Writer, vs []decode.Version) error {
	fmt.Fprintf(w, "<!-- Code generated by \"pmdump versions --markdown\"; DO NOT EDIT. Run %s after changing the registry (decode/tables.go). -->\n\n", versionsGenerate)
	fmt.Fprintf(w, "# Wire versions of the Purple Martians netgame\n\n")
	fmt.Fprintf(w, "pmdump reads every wire version of the game listed here: a version is a range of builds whose\n"+
		"netgames talk to each other. This page is made from pmdump's registry of versions by\n"+
		"`pmdump versions --markdown`; `pmdump versions` prints the same facts on a terminal and\n"+
		"`pmdump versions --json` as JSON.\n\n")
	fmt.Fprintf(w, "pmdump tells the version of each conversation (a client and its server) from the bytes alone:\n"+
		"every packet counts for the versions whose layout of its name decodes it and whose piece size\n"+
		"fits its pieces; a server that sends everything from its listening port counts for the versions\n"+
		"with one shared server socket; the size of the rebuilt states tells apart versions with the same\n"+
		"packets; and when the evidence cannot choose, the version users meet most is taken. The column\n"+
		"*how pmdump tells it* says what marks each version. `--era NAME` (a name or alias below) forces\n"+
		"that version on every conversation instead of `--era auto`, the default.\n\n")
	fmt.Fprintf(w, "The two eras pmdump began with keep their names, `%s` and `%s`; the versions after them are\n"+
		"named after the year and month of their first build.\n\n", decode.Legacy, decode.Modern)
	fmt.Fprintf(w, "| version | builds | what changed | how pmdump tells it |\n|---|---|---|---|\n")
	for _, v := range vs {
		vi := v.Info()
		fmt.Fprintf(w, "| [%s](#%s) | %s | %s | %s |\n", v, anchor(v.String()), builds(vi), mdCell(vi.Changes), mdCell(vi.Tells))
	}
	for _, v := range vs {
		fmt.Fprintf(w, "\n## %s\n\n", v)
		for _, f := range versionFacts(v) {
			fmt.Fprintf(w, "- **%s**: %s\n", f.label, mdText(f.text))
		}
		fmt.Fprintf(w, "\n| packet | dir | kind | bytes | since | what it is |\n|---|---|---|---|---|---|\n")
		for _, l := range v.Layouts() {
			fmt.Fprintf(w, "| `%s` | %s | %s | %s | %s | %s |\n", l.Name, l.Dir.Arrow(), l.Kind, packetLen(l), l.First(), mdCell(l.Doc))
		}
	}
	return nil
}

// anchor is the link target of a heading, as GitHub makes it.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdText escapes what Markdown would take for markup in text.
func mdText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "<", `\<`, "`", "\\`").Replace(s)
}

// mdCell is mdText for a table cell.
func mdCell(s string) string { return strings.ReplaceAll(mdText(s), "|", `\|`) }
