package engine

// SetTwoStages forces the choice of a fast pass in two stages (1: wherever
// allowed, -1: never; see front) until the returned func is called.
func SetTwoStages(v int) (restore func()) {
	old := forceStages
	forceStages = v
	return func() { forceStages = old }
}
