package controlplane

import "flag"

// FuzzWorker tells whether this test binary runs as a worker of `go test
// -fuzz`. A worker runs only the fuzz target, and every worker runs
// TestMain again, so a TestMain whose fuzz targets need no cluster starts
// none in a worker: starting a control plane in each kept fuzz runs from
// getting anywhere. flag.Parse must have run.
func FuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}
