package replay_test

import (
	"os"
	"testing"

	"github.com/pmdump/pmdump/internal/fuzzcorpus"
)

// TestSeedCorpus keeps testdata/fuzz in step with the seed generator.
func TestSeedCorpus(t *testing.T) {
	fuzzcorpus.Sync(t, "FuzzBuilder", builderSeeds())
}

// TestMain bounds the minimizing of what fuzzing finds: a FuzzBuilder
// input is a few KB of difs, at a millisecond or two a run.
func TestMain(m *testing.M) {
	fuzzcorpus.BoundMinimize("250x")
	os.Exit(m.Run())
}
