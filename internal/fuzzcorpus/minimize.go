package fuzzcorpus

import "flag"

// BoundMinimize makes fuzzing minimize each new input it finds in at most
// runs calls of the fuzz function, unless -test.fuzzminimizetime was
// given; a TestMain calls it before m.Run. Go's default is 60 s an input,
// and an input of a few KB to a fuzz function of a few milliseconds takes
// a call per byte removed: every new input found kept a worker minimizing
// for the whole minute, the status line said 0 execs/s (calls made while
// minimizing count only when it ends), and with every worker at it
// fuzzing stood still.
func BoundMinimize(runs string) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if f := flag.Lookup("test.fuzzminimizetime"); f != nil && !set {
		f.Value.Set(runs)
	}
}
