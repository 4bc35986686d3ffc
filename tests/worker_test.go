package tests

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// workerEnv, when set, makes the test binary a worker process instead of
// running tests: it commits through the library, as an agent would, so a
// test can have several real processes write one repository at once.
const workerEnv = "TRACT_E2E_WORKER"

// runWorker reads its task from the environment (TRACT_DB, TRACT_E2E_WORKER
// as the worker's name, TRACT_E2E_BRANCH, TRACT_E2E_COMMITS), waits for
// standard input to close (so that every worker starts at once), then
// commits one message per transaction and prints each commit's hash.
func runWorker() int {
	name := os.Getenv(workerEnv)
	n, err := strconv.Atoi(os.Getenv("TRACT_E2E_COMMITS"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: TRACT_E2E_COMMITS:", err)
		return 2
	}
	// Without fsync: what these workers test is that concurrent commits
	// are serialised and none is lost, not durability across a crash.
	t, err := tract.Open(os.Getenv("TRACT_DB"), tract.WithLockTimeout(30*time.Second), tract.WithNoSync())
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	defer t.Close()
	if b := os.Getenv("TRACT_E2E_BRANCH"); b != "" {
		t = t.OnBranch(b)
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx := context.Background()
	for i := range n {
		h, err := t.User(ctx, fmt.Sprintf("%s %03d", name, i))
		if err != nil {
			fmt.Fprintf(os.Stderr, "worker %s, commit %d: %v\n", name, i, err)
			return 1
		}
		fmt.Println(h)
	}
	return 0
}

// workers runs one worker process per branch (repeat a branch to have
// several workers on it), each committing n messages, all started at once.
// It returns every hash the workers reported.
func workers(t *testing.T, db string, branches []string, n int) []string {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	type proc struct {
		cmd    *exec.Cmd
		start  io.WriteCloser
		stdout bytes.Buffer
		stderr bytes.Buffer
	}
	procs := make([]*proc, len(branches))
	for i, b := range branches {
		p := &proc{cmd: exec.Command(self)}
		p.cmd.Env = append(os.Environ(), workerEnv+"="+fmt.Sprintf("w%d", i), "TRACT_DB="+db,
			"TRACT_E2E_BRANCH="+b, "TRACT_E2E_COMMITS="+strconv.Itoa(n))
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		p.start, err = p.cmd.StdinPipe()
		require.NoError(t, err)
		require.NoError(t, p.cmd.Start())
		t.Cleanup(func() { _ = p.cmd.Process.Kill() })
		procs[i] = p
	}
	for _, p := range procs {
		p.start.Close()
	}
	var hashes []string
	for i, p := range procs {
		require.NoError(t, p.cmd.Wait(), "worker %d: %s", i, p.stderr.String())
		hashes = append(hashes, strings.Fields(p.stdout.String())...)
	}
	return hashes
}
