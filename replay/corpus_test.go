package replay_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the seed files in testdata/fuzz")

// corpusFile is a value in Go's fuzz corpus file format.
func corpusFile(b []byte) []byte {
	return []byte(fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", b))
}

// syncCorpus checks that testdata/fuzz/<target> holds one file seed-<name>
// per seed with exactly its bytes, or with -update-corpus writes them. Files
// not named seed-* (crashers the fuzzer found) are left alone.
func syncCorpus(t *testing.T, target string, seeds map[string][]byte) {
	t.Helper()
	dir := filepath.Join("testdata", "fuzz", target)
	if *updateCorpus {
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
		want := corpusFile(seeds[n])
		if *updateCorpus {
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
	if !*updateCorpus && len(files) != len(seeds) {
		t.Errorf("%s holds %d seed files, the generator makes %d; run go test -run TestSeedCorpus -update-corpus", dir, len(files), len(seeds))
	}
}

// TestSeedCorpus keeps testdata/fuzz in step with the seed generator.
func TestSeedCorpus(t *testing.T) {
	syncCorpus(t, "FuzzBuilder", builderSeeds())
}
