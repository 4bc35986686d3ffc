//go:build !linux

package tract_test

import (
	"fmt"
	"os"
)

// appendWorkerEnv names the variable that makes the test binary a process
// of BenchmarkSharedAppendBound, which runs on Linux only (fdatasync).
const appendWorkerEnv = "TRACT_BENCH_APPEND"

// appendWorker refuses: BenchmarkSharedAppendBound runs on Linux only.
func appendWorker() int {
	fmt.Fprintln(os.Stderr, "BenchmarkSharedAppendBound runs on Linux only")
	return 2
}
