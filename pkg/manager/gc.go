package manager

import "runtime/debug"

// gcPercent is the garbage collector's target when GOGC is not set. A
// service's heap is mostly its watch caches, which live as long as the
// process; at Go's default of 100 the heap grew to twice them before each
// collection, and at 1000 Applications the sync-controller's peak RSS was
// 139 MiB for 37 MiB of live heap (docs/benchmarks.md). The services wait on
// the API server far more than they compute, so collecting twice as often
// costs little.
const gcPercent = 50

// tuneGC sets the garbage collector's target to gcPercent unless the
// environment, as lookupEnv reads it, sets GOGC.
func tuneGC(lookupEnv func(string) (string, bool)) {
	if _, set := lookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
