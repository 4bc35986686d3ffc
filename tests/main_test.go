// Package tests holds the end-to-end tests of the tract command: TestMain
// builds the binary once, and every test runs it in its own temporary
// directory with a controlled environment, asserting on stdout, stderr and
// the exit code separately.
package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// tractBin is the path of the binary built by TestMain.
var tractBin string

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" {
		os.Exit(runWorker())
	}
	if os.Getenv(requestWorkerEnv) != "" {
		os.Exit(runRequestWorker())
	}
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "tract-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "tests: temp dir:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	tractBin = filepath.Join(dir, "tract")
	// go test runs in the package directory; the module root is its parent.
	build := exec.Command("go", "build", "-o", tractBin, "./cmd/tract")
	build.Dir = ".."
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "tests: go build ./cmd/tract:", err)
		return 1
	}
	return m.Run()
}
