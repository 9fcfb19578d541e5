// Package golden keeps the expected output of tests in golden files: a test
// reads the text it must produce from a file under testdata/, and the
// -update flag of go test rewrites the files from what the code produces
// now (review them with git diff before committing).
//
// It is imported by tests only.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// Update is the -update flag: rewrite the golden files instead of comparing
// with them.
var Update = flag.Bool("update", false, "rewrite the golden files under testdata/ instead of comparing with them")

// Want returns the text of the golden file at path, what got must be. Under
// -update it first writes got to path (making its directory), so the two
// agree. A golden file that cannot be read fails the test; rewrite names
// the command that writes it.
func Want(t testing.TB, path, got, rewrite string) string {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return got
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run %s to write it)", err, rewrite)
	}
	return string(want)
}
