//go:build !race

package serve

// raceOn is true under the race detector (see race_on_test.go).
const raceOn = false
