package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// nodeModules is where .ci/run installs the real clients the tests drive
// (tests/node/package.json: the OpenAI, Anthropic and MCP SDKs for Node).
func nodeModules(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("node", "node_modules"))
	require.NoError(t, err)
	_, nodeErr := exec.LookPath("node")
	_, modErr := os.Stat(dir)
	if nodeErr != nil || modErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the Node clients are not installed (node: %v, modules: %v): .ci/run installs them with 'npm ci' in tests/node", nodeErr, modErr)
		}
		t.Skip("the Node clients are not installed: run 'npm ci' in tests/node")
	}
	return dir
}

// runNode runs a JavaScript module (script, the module's source) with
// node, beside tests/node so that its imports find the SDKs, with env
// added to the test's environment. It returns standard output and fails
// the test with standard error when node exits non-zero.
func runNode(t *testing.T, script string, env ...string) string {
	t.Helper()
	nodeModules(t)
	dir, err := filepath.Abs("node")
	require.NoError(t, err)
	f, err := os.CreateTemp(dir, "test-*.mjs")
	require.NoError(t, err)
	t.Cleanup(func() { os.Remove(f.Name()) })
	_, err = f.WriteString(script)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", f.Name())
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "node %s:\n%s\nstdout:\n%s", filepath.Base(f.Name()), stderr.String(), out)
	return string(out)
}
