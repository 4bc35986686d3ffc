//go:build !linux

package tract_test

import (
	"fmt"
	"os"
)

// appendWorker refuses: BenchmarkSharedAppendBound runs on Linux only.
func appendWorker() int {
	fmt.Fprintln(os.Stderr, "BenchmarkSharedAppendBound runs on Linux only")
	return 2
}
