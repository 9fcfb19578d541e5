package replay_test

import (
	"testing"

	"github.com/pmdump/pmdump/internal/fuzzcorpus"
)

// TestSeedCorpus keeps testdata/fuzz in step with the seed generator.
func TestSeedCorpus(t *testing.T) {
	fuzzcorpus.Sync(t, "FuzzBuilder", builderSeeds())
}
