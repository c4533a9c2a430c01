package planner

import "sync"

// ObjectsAtOnce bounds the requests one reconcile makes at once for the
// objects of its Application. A plan reads and dry-runs every object, and a
// wave applies every object of a kind; one after the other, an Application
// of a few objects spent most of a rollout waiting on round trips while the
// API server had capacity to spare (docs/benchmarks.md).
const ObjectsAtOnce = 8

// InParallel calls fn for every i in [0, n), at most ObjectsAtOnce at a time,
// and returns fn's errors by i. fn must not change the rollout: the caller
// records what the calls found, in order, once all have returned.
func InParallel(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	if n == 1 {
		errs[0] = fn(0)
		return errs
	}
	slots := make(chan struct{}, ObjectsAtOnce)
	var wg sync.WaitGroup
	for i := range n {
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = fn(i)
		})
	}
	wg.Wait()
	return errs
}

// FirstError is the error of the lowest i, the one a loop over the objects
// in order would have stopped at.
func FirstError(errs []error) (int, error) {
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return -1, nil
}
