package controlplane

import "testing"

// FuzzWorker is false in a plain test run: TestMain starts its cluster.
func TestFuzzWorker_IsFalseOutsideAFuzzWorker(t *testing.T) {
	if FuzzWorker() {
		t.Fatal("FuzzWorker() = true in a plain test run")
	}
}
