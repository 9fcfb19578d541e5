//go:build race

package serve

// raceOn is true under the race detector, which keeps no sync.Pool items
// and so makes heap figures meaningless as bounds.
const raceOn = true
