// Package fuzzcorpus keeps the seed corpora of the project's fuzz targets
// (testdata/fuzz/<target>/seed-*) in step with the code that generates
// them: tests call Sync, and "go test -run TestSeedCorpus -update-corpus"
// rewrites the files.
package fuzzcorpus

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Update is the -update-corpus flag of the test binaries that import this
// package: rewrite the seed files instead of checking them.
var Update = flag.Bool("update-corpus", false, "rewrite the seed files in testdata/fuzz")

// File is a value in Go's fuzz corpus file format.
func File(b []byte) []byte {
	return []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b))
}

// Sync checks that testdata/fuzz/<target> holds one file seed-<name>
// per seed with exactly its bytes, or with -update-corpus writes them. Files
// not named seed-* (crashers the fuzzer found) are left alone.
func Sync(t testing.TB, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if *Update {
		old, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
		for _, f := range old {
			os.Remove(f)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	names := make([]string, 0, len(seeds))
	for n := range seeds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		path := filepath.Join(dir, "seed-"+n)
		want := File(seeds[n])
		if *Update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("seed %s is missing or stale (%v); run go test -run TestSeedCorpus -update-corpus", path, err)
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "seed-*"))
	if !*Update && len(files) != len(seeds) {
		t.Errorf("%s holds %d seed files, the generator makes %d; run go test -run TestSeedCorpus -update-corpus", dir, len(files), len(seeds))
	}
}
