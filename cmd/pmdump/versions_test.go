package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/pmdump/pmdump/decode"
)

// docs/versions.md is what pmdump versions --markdown prints.
func TestVersionsDocUpToDate(t *testing.T) {
	want, errs, code := pmdump("versions", "--markdown")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", versionsDoc))
	if err != nil {
		t.Fatalf("%v; run %s", err, versionsGenerate)
	}
	if string(got) == want {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
	i := 0
	for i < len(gl) && i < len(wl) && gl[i] == wl[i] {
		i++
	}
	line := func(ls []string) string {
		if i < len(ls) {
			return ls[i]
		}
		return "(end of file)"
	}
	t.Errorf("%s is out of date: run %s\nfirst difference, line %d:\n  file:    %s\n  command: %s",
		versionsDoc, versionsGenerate, i+1, line(gl), line(wl))
}

// The go:generate line writes the page the test compares.
func TestVersionsGenerateLine(t *testing.T) {
	src, err := os.ReadFile("versions.go")
	if err != nil {
		t.Fatal(err)
	}
	want := "//go:generate go run . versions --markdown -o ../../" + versionsDoc + "\n"
	if !bytes.Contains(src, []byte(want)) {
		t.Errorf("versions.go has no line %q", want)
	}
}

// tableRows runs pmdump versions with args and returns its table's rows
// by version name, each cell by column name.
func tableRows(t *testing.T, args ...string) (names []string, rows map[string]map[string]string) {
	t.Helper()
	out, errs, code := pmdump(append([]string{"versions"}, args...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	gap := regexp.MustCompile(`  +`)
	head := gap.Split(lines[0], -1)
	rows = map[string]map[string]string{}
	for _, l := range lines[1:] {
		cells := gap.Split(l, -1)
		if len(cells) != len(head) {
			t.Fatalf("row %q has %d cells, the header %d: %q", l, len(cells), len(head), head)
		}
		row := map[string]string{}
		for i, c := range cells {
			row[head[i]] = c
		}
		names = append(names, cells[0])
		rows[cells[0]] = row
	}
	return names, rows
}

// The table has one row per version, oldest first, and every cell says
// what the registry says.
func TestVersionsTable(t *testing.T) {
	names, rows := tableRows(t)
	if !slices.Equal(names, decode.VersionNames()) {
		t.Fatalf("rows %q, want the versions oldest first %q", names, decode.VersionNames())
	}
	for _, v := range decode.Versions() {
		t.Run(v.String(), func(t *testing.T) {
			row, vi := rows[v.String()], v.Info()
			if got := row["byte order"]; (got == "big-endian") != (v.Order() == binary.BigEndian) || !strings.HasSuffix(got, "-endian") {
				t.Errorf("byte order %q; the registry's big-endian: %v", got, vi.BigEndian)
			}
			if got, want := row["handshake"], v.Has(decode.KindHandshake); got != yesNo(want) {
				t.Errorf("handshake %q, the version has one: %v", got, want)
			}
			if got := row["server socket"]; (got == "one shared") != vi.SharedServerSocket {
				t.Errorf("server socket %q, the registry's shared socket: %v", got, vi.SharedServerSocket)
			}
			if got, want := row["piece"], strconv.Itoa(v.PieceSize()); got != want {
				t.Errorf("piece %q, want %s", got, want)
			}
			for _, s := range strings.Split(row["state"], ",") {
				if n, err := strconv.Atoi(s); err != nil || !v.StateSize(n) {
					t.Errorf("state %q: %s is not a state size of the version", row["state"], s)
				}
			}
			var seq []string
			if got := row["level seq on the wire"]; got != "none" {
				seq = strings.Split(got, ",")
			}
			for _, l := range v.Layouts() {
				if on := slices.Contains(seq, l.Name); on != (l.FieldByRole(decode.RoleLevelSeq) >= 0) {
					t.Errorf("level seq %q: %s carries it: %v", seq, l.Name, !on)
				}
			}
			if got := row["sync"]; got != v.Sync().String() {
				t.Errorf("sync %q, want %s", got, v.Sync())
			}
			ack := v.Kind(v.Drop().Ack)
			if got := row["drop"]; ack == nil || !strings.Contains(got, ack.Name) || !strings.Contains(got, " "+strconv.Itoa(v.Drop().Frames)+" frames") {
				t.Errorf("drop %q does not name the acknowledgement and frames of %+v", got, v.Drop())
			}
			if got := row["builds"]; !strings.HasPrefix(got, vi.First.Date) || !strings.HasSuffix(got, vi.Last.Date) {
				t.Errorf("builds %q, want %s to %s", got, vi.First.Date, vi.Last.Date)
			}
		})
	}
}

// Known facts of the wire, checked in the registry and in the table.
func TestVersionsTableFacts(t *testing.T) {
	_, rows := tableRows(t)
	for _, tt := range []struct {
		version, column string
		fact            func(decode.Version) bool
		cell            string // the cell when the fact holds
	}{
		{"legacy", "byte order", func(v decode.Version) bool { return v.Info().BigEndian }, "big-endian"},
		{"legacy", "server socket", func(v decode.Version) bool { return !v.Info().SharedServerSocket }, "one per client"},
		{"modern", "handshake", func(v decode.Version) bool { return v.Has(decode.KindHandshake) }, "yes"},
		{"2024-04", "handshake", func(v decode.Version) bool { return !v.Has(decode.KindHandshake) }, "no"},
		{"2024-05", "piece", func(v decode.Version) bool { return v.PieceSize() > decode.Modern.PieceSize() }, strconv.Itoa(decode.MustParseVersion("2024-05").PieceSize())},
		{"2024-06", "level seq on the wire", func(v decode.Version) bool { return v.LevelSeqOn(decode.KindInput) && v.LevelSeqOn(decode.KindDifAck) }, "sjon,cdat,stdf,stak"},
		{"2026-07", "server socket", func(v decode.Version) bool { return v.Info().SharedServerSocket }, "one shared"},
		{"2026-07", "sync", func(v decode.Version) bool { return v.Sync() == decode.Rewind }, "rewind"},
	} {
		v := decode.MustParseVersion(tt.version)
		if !tt.fact(v) {
			t.Errorf("%s: the registry no longer has the fact of %s %q", tt.version, tt.column, tt.cell)
			continue
		}
		if got := rows[v.String()][tt.column]; got != tt.cell {
			t.Errorf("%s: %s %q, want %q", tt.version, tt.column, got, tt.cell)
		}
	}
}

// --json: one object per version and line, with the registry's facts.
func TestVersionsJSON(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []decode.Version
	}{
		{"all", nil, decode.Versions()},
		{"named", []string{"2026-07", "legacy"}, []decode.Version{decode.MustParseVersion("2026-07"), decode.Legacy}},
		{"alias", []string{"head", "2026-07"}, []decode.Version{decode.MustParseVersion("head")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := pmdump(append([]string{"versions", "--json"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("%d lines, want %d", len(lines), len(tt.want))
			}
			for i, v := range tt.want {
				var j versionJSON
				dec := json.NewDecoder(strings.NewReader(lines[i]))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&j); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
				vi := v.Info()
				if j.Name != v.String() || j.BigEndian != vi.BigEndian || j.SharedServerSocket != vi.SharedServerSocket ||
					j.EphemeralClientPort != vi.EphemeralClientPort || j.PieceSize != v.PieceSize() ||
					!slices.Equal(j.StateSizes, vi.StateSizes) || j.Sync != v.Sync().String() || j.DifEvery != vi.DifEvery ||
					j.Handshake != v.Has(decode.KindHandshake) || j.Prior != vi.Prior || !slices.Equal(j.Aliases, vi.Aliases) ||
					j.First.Date != vi.First.Date || j.Last.Commit != vi.Last.Commit || j.Changes != vi.Changes || j.Tells != vi.Tells {
					t.Errorf("%s: %+v\ndisagrees with the registry: %+v", v, j, *vi)
				}
				if (j.StateLevelSeq == nil) != (vi.StateLevelSeq < 0) || j.StateLevelSeq != nil && *j.StateLevelSeq != vi.StateLevelSeq {
					t.Errorf("%s: state_level_seq %v, the registry's %d", v, j.StateLevelSeq, vi.StateLevelSeq)
				}
				if d := v.Drop(); j.Drop.Frames != d.Frames || j.Drop.After != d.After || j.Drop.Grace != d.Grace ||
					j.Drop.Ack != v.Kind(d.Ack).Name || j.Drop.Reason != d.Reason {
					t.Errorf("%s: drop %+v, the registry's %+v", v, j.Drop, d)
				}
				if (j.FileBlob != nil) != v.Has(decode.KindFilePiece) || j.FileBlob != nil && *j.FileBlob != vi.FileBlob {
					t.Errorf("%s: file_blob %v, the registry's %d", v, j.FileBlob, vi.FileBlob)
				}
				ls := v.Layouts()
				if len(j.Packets) != len(ls) {
					t.Fatalf("%s: %d packets, the version has %d", v, len(j.Packets), len(ls))
				}
				for k, l := range ls {
					p := j.Packets[k]
					if p.Name != l.Name || p.Kind != l.Kind.String() || p.Dir != l.Dir.String() || p.MinLen != l.MinLen() ||
						p.LevelSeq != (l.FieldByRole(decode.RoleLevelSeq) >= 0) || p.Since != l.First().String() {
						t.Errorf("%s: packet %+v, the layout: %s %s %s", v, p, l.Name, l.Kind, l.Dir)
					}
					if slices.Contains(j.LevelSeqPackets, l.Name) != p.LevelSeq {
						t.Errorf("%s: level_seq_packets %q and packet %s disagree", v, j.LevelSeqPackets, l.Name)
					}
				}
				for _, s := range j.SamePacketsAs {
					w, err := decode.ParseVersion(s)
					if err != nil || w == v || !v.Siblings().Has(w) {
						t.Errorf("%s: same_packets_as %q: %s is not another version with its packets", v, j.SamePacketsAs, s)
					}
				}
				if len(j.SamePacketsAs) != v.Siblings().Len()-1 {
					t.Errorf("%s: same_packets_as %q, the version has %d siblings", v, j.SamePacketsAs, v.Siblings().Len()-1)
				}
			}
		})
	}
}

// squash makes runs of white space one space, so wrapped text compares
// with the registry's.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// With names, the text is a block per version named, in the order given:
// what changed, how it is told, its packets.
func TestVersionsDetail(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []decode.Version
	}{
		{"one", []string{"2026-07"}, []decode.Version{decode.MustParseVersion("2026-07")}},
		{"alias, any case", []string{"HEAD"}, []decode.Version{decode.MustParseVersion("2026-07")}},
		{"order given, once each", []string{"modern", "legacy", "m"}, []decode.Version{decode.Modern, decode.Legacy}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := pmdump(append([]string{"versions"}, tt.args...)...)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errs)
			}
			blocks := strings.Split(out, "\n\n")
			if len(blocks) != len(tt.want) {
				t.Fatalf("%d blocks, want %d:\n%s", len(blocks), len(tt.want), out)
			}
			for i, v := range tt.want {
				b := blocks[i]
				vi := v.Info()
				if !strings.HasPrefix(b, v.Label()+"\n") {
					t.Errorf("block %d does not start with %q:\n%s", i, v.Label(), b)
				}
				for _, s := range []string{vi.Changes, vi.Tells, byteOrder(v), build(vi.First), build(vi.Last)} {
					if !strings.Contains(squash(b), squash(s)) {
						t.Errorf("%s: no %q in\n%s", v, s, b)
					}
				}
				for _, l := range v.Layouts() {
					row := regexp.MustCompile(`(?m)^ +` + regexp.QuoteMeta(l.Name) + ` +` + regexp.QuoteMeta(l.Dir.Arrow()) + ` +` + regexp.QuoteMeta(l.Kind.String()) + ` `)
					if !row.MatchString(b) {
						t.Errorf("%s: no line of packet %s (%s %s)", v, l.Name, l.Dir.Arrow(), l.Kind)
					}
				}
				for _, line := range strings.Split(b, "\n") {
					if n := len([]rune(line)); n > detailWidth && !strings.HasPrefix(line, "    ") {
						t.Errorf("%s: a line of %d runes, over %d: %q", v, n, detailWidth, line)
					}
				}
			}
		})
	}
}

// The page: every version has a row and a section, and the names the
// intro promises hold.
func TestVersionsMarkdown(t *testing.T) {
	out, _, code := pmdump("versions", "--markdown")
	if code != exitOK {
		t.Fatal("exit", code)
	}
	for _, v := range decode.Versions() {
		if !strings.Contains(out, "\n| ["+v.String()+"](#"+anchor(v.String())+") | ") {
			t.Errorf("no table row of %s", v)
		}
		if !strings.Contains(out, "\n## "+v.String()+"\n") {
			t.Errorf("no section of %s", v)
		}
		for _, l := range v.Layouts() {
			if l.Kind == decode.KindUnknown {
				t.Errorf("%s: packet %s of no kind", v, l.Name)
			}
		}
	}
	// The versions after legacy and modern are named after the year and
	// month of their first build, as the intro says.
	for _, v := range decode.Versions()[2:] {
		if d := v.Info().First.Date; !strings.HasPrefix(v.String(), d[:7]) {
			t.Errorf("%s: first build %s, not of its name's month", v, d)
		}
	}
	if !strings.Contains(out, "`"+decode.Legacy.String()+"` and `"+decode.Modern.String()+"`") {
		t.Error("the intro does not name legacy and modern")
	}
}

func TestVersionsErrors(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want []string // in the diagnostic
	}{
		{"unknown name", []string{"versions", "2023-01"}, append([]string{`"2023-01"`}, decode.VersionNames()...)},
		{"auto is no version", []string{"versions", "auto"}, []string{`"auto"`}},
		{"one known, one not", []string{"versions", "legacy", "nope"}, []string{`"nope"`}},
		{"both forms", []string{"versions", "--json", "--markdown"}, []string{"--json", "--markdown"}},
		{"unwritable", []string{"versions", "-o", filepath.Join(t.TempDir(), "no", "such", "dir", "v.md")}, []string{"-o"}},
		{"bad flag", []string{"versions", "--bogus"}, []string{"--bogus"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errs, code := pmdump(tt.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (usage)", code, exitUsage)
			}
			if out != "" {
				t.Errorf("wrote to stdout: %q", out)
			}
			if !strings.HasPrefix(errs, "pmdump") {
				t.Errorf("no diagnostic: %q", errs)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("diagnostic %q does not name %s", errs, w)
				}
			}
		})
	}
}

// -o writes what standard output would get.
func TestVersionsOutputFile(t *testing.T) {
	want, _, _ := pmdump("versions", "--markdown")
	path := filepath.Join(t.TempDir(), "versions.md")
	out, errs, code := pmdump("versions", "--markdown", "-o", path)
	if code != exitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errs)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Error("-o wrote another page than standard output gets")
	}
}

func TestVersionsHelp(t *testing.T) {
	out, _, code := pmdump("versions", "--help")
	if code != exitOK || !strings.Contains(out, "Examples:") || !strings.Contains(out, "pmdump versions 2026-07") {
		t.Errorf("versions --help: exit %d, no examples:\n%s", code, out)
	}
	out, _, _ = pmdump("--help")
	if !strings.Contains(out, "versions") {
		t.Errorf("pmdump --help does not list versions:\n%s", out)
	}
}
