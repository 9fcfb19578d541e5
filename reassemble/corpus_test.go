package reassemble_test

import (
	"testing"

	"github.com/pmdump/pmdump/internal/fuzzcorpus"
)

// TestSeedCorpus keeps testdata/fuzz in step with the seed generators.
func TestSeedCorpus(t *testing.T) {
	fuzzcorpus.Sync(t, "FuzzAssembler", assemblerSeeds())
	fuzzcorpus.Sync(t, "FuzzInflate", inflateSeeds(t))
	fuzzcorpus.Sync(t, "FuzzInflateSparse", sparseSeeds(t))
}
