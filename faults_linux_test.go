//go:build linux

package tract_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
)

// The fault tests run the operations that write in a worker process (the
// test binary again, see faults_worker_test.go) under a fault: a file
// size limit (RLIMIT_FSIZE, with SIGXFSZ ignored) that makes writes past
// it fail with EFBIG as on a full disk, or a file the worker may only
// read. Each operation must fail cleanly — an error that says what
// happened, no panic and nothing from the Go runtime on stderr — and the
// repository, opened normally afterwards, must pass Fsck and hold exactly
// what it held before, plus what the worker was told was committed.

// faultSetup builds the repository a fault test starts from.
type faultSetup func(t *testing.T, tr *tract.Tract)

// newFaultRepo makes a repository with setup and compacts it, so that the
// file has no free pages and every write needs new ones, then closes it.
func newFaultRepo(t *testing.T, setup faultSetup) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "repo", "tract.db")
	tr, err := tract.Init(path, tract.WithNoSync())
	require.NoError(t, err)
	setup(t, tr)
	_, err = tr.Compact(context.Background())
	require.NoError(t, err)
	require.NoError(t, tr.Close())
	return path
}

// chainOfSize commits n messages of size bytes each.
func chainOfSize(n, size int) faultSetup {
	return func(t *testing.T, tr *tract.Tract) {
		_, err := tr.CommitMany(context.Background(), faultMessages("setup", n, size))
		require.NoError(t, err)
	}
}

// withOrphans commits n messages of size bytes, then soft-resets to the
// fifth: the rest are orphans that a GC with no expiry removes.
func withOrphans(n, size int) faultSetup {
	return func(t *testing.T, tr *tract.Tract) {
		ctx := context.Background()
		hs, err := tr.CommitMany(ctx, faultMessages("setup", n, size))
		require.NoError(t, err)
		_, err = tr.Reset(ctx, hs[4].String(), tract.Soft)
		require.NoError(t, err)
		_, err = tr.CreateBranch(ctx, "side", hs[1].String())
		require.NoError(t, err)
	}
}

// highWater returns the size of the file's used pages: bbolt writes every
// new page at or past it, so a file size limit there makes the first
// write that needs a new page fail.
func highWater(t *testing.T, path string) int64 {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	require.NoError(t, err)
	defer db.Close()
	var size int64
	require.NoError(t, db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }))
	return size
}

// repoState is what a repository shows through the API.
type repoState struct {
	All      *tract.History
	Branches []tract.Branch
	Status   *tract.Status
	Reflogs  map[string][]tract.ReflogEntry
	Log      []tract.Hash // HEAD's history
	Compile  []tract.Message
	Files    []string // the repository directory's files
}

// observe opens the repository at path, checks it with Fsck and returns
// what it shows.
func observe(t *testing.T, path string) repoState {
	t.Helper()
	ctx := context.Background()
	tr, err := tract.Open(path, tract.WithReadOnly())
	require.NoError(t, err)
	defer tr.Close()
	rep, err := tr.Fsck(ctx)
	require.NoError(t, err)
	assert.True(t, rep.OK(), "fsck problems: %v", rep.Problems)
	assert.Zero(t, rep.UnfinishedImports, "unfinished imports left in the file")
	var s repoState
	s.All, err = tr.LogAll(ctx)
	require.NoError(t, err)
	s.Branches, err = tr.Branches(ctx)
	require.NoError(t, err)
	s.Status, err = tr.Status(ctx)
	require.NoError(t, err)
	s.Reflogs = map[string][]tract.ReflogEntry{}
	for _, name := range append([]string{"HEAD", "STRANDED"}, branchNamesOf(s.Branches)...) {
		s.Reflogs[name], err = tr.Reflog(ctx, name)
		require.NoError(t, err)
	}
	log, err := tr.Log(ctx)
	require.NoError(t, err)
	for _, c := range log {
		s.Log = append(s.Log, c.Hash)
	}
	s.Compile, err = tr.Compile(ctx)
	require.NoError(t, err)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	for _, e := range entries {
		s.Files = append(s.Files, e.Name())
	}
	return s
}

func branchNamesOf(bs []tract.Branch) []string {
	var out []string
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

// runFaultWorker runs task in a worker process and returns its report. As
// nobody, it runs as the unprivileged user nobody (the tests are root, who
// may write any file).
func runFaultWorker(t *testing.T, task faultTask, nobody bool) faultResult {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	spec, err := json.Marshal(task)
	require.NoError(t, err)
	if nobody {
		self = copyForNobody(t, self)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), faultWorkerEnv+"="+string(spec))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if nobody {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	require.NoError(t, cmd.Run(), "the worker failed:\n%s", stderr.String())
	assert.Empty(t, stderr.String(), "the worker wrote to stderr: a panic, or the runtime's text?")
	var res faultResult
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &res), "the worker's report: %s", stdout.String())
	require.Len(t, res.Ops, len(task.Ops))
	return res
}

// copyForNobody copies the test binary where the user nobody may run it.
func copyForNobody(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
		require.NoError(t, os.Chmod(d, 0o755))
	}
	in, err := os.Open(bin)
	require.NoError(t, err)
	defer in.Close()
	dst := filepath.Join(dir, "worker")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
	return dst
}

// TestFault_FullDisk runs each writing operation into a file size limit,
// set just past the pages the file uses (after Compact, so that there are
// no free pages to reuse): bbolt fails either to grow the file or to write
// a page past the limit. The operation fails with an error that says the
// file is too large, and leaves the repository valid and exactly as it
// was before it.
func TestFault_FullDisk(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup faultSetup
		op    string
		// room is how far past the used pages the file may grow.
		room int64
	}{
		{"Commit", chainOfSize(20, 1<<10), "commit", 0},
		{"CommitMany", chainOfSize(20, 1<<10), "commit-many", 256 << 10},
		{"import written as a pack", chainOfSize(20, 1<<10), "import-pack", 3 << 20},
		{"import sorted in a run", chainOfSize(20, 1<<10), "import-run", 1 << 20},
		{"CompressRange", chainOfSize(110, 16<<10), "compress", 64 << 10},
		{"GC", withOrphans(40, 16<<10), "gc", 0},
		{"hard reset", chainOfSize(40, 16<<10), "reset-hard", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := newFaultRepo(t, tc.setup)
			before := observe(t, path)
			res := runFaultWorker(t, faultTask{DB: path, Limit: highWater(t, path) + tc.room, Ops: []string{tc.op}}, false)
			op := res.Ops[0]
			t.Logf("%s: %s (errors.Is EFBIG: %v)", tc.op, op.Err, op.EFBIG)
			assert.Contains(t, op.Err, "file too large", "the error says why")
			assert.Empty(t, op.Acked, "nothing acknowledged")
			assert.Equal(t, before.Log, res.Log, "the worker reads the history as it was")
			after := observe(t, path)
			assert.Equal(t, before, after, "the repository is as it was")
			requireUsable(t, path)
		})
	}
}

// Commits one by one until the disk is full: every commit acknowledged
// before the one that failed is there, in order, and nothing else is;
// with room again, the same process commits on.
func TestFault_FullDiskCommitsUntilFull(t *testing.T) {
	for _, recovers := range []bool{false, true} {
		t.Run(map[bool]string{false: "then stop", true: "then recover"}[recovers], func(t *testing.T) {
			path := newFaultRepo(t, chainOfSize(5, 1<<10))
			before := observe(t, path)
			res := runFaultWorker(t, faultTask{DB: path, Limit: highWater(t, path) + 512<<10, Ops: []string{"commits"}, Recover: recovers}, false)
			op := res.Ops[0]
			t.Logf("after %d commits: %s (errors.Is EFBIG: %v)", len(op.Acked), op.Err, op.EFBIG)
			assert.Contains(t, op.Err, "file too large", "the error says why")
			require.NotEmpty(t, op.Acked, "some commits fit before the limit")
			acked := slices.Clone(op.Acked)
			slices.Reverse(acked)
			assert.Equal(t, append(acked, before.Log...), res.Log, "the worker reads what it was told was committed, after the failure")
			want := slices.Clone(op.Acked)
			if recovers {
				require.Empty(t, res.RecoverErr)
				want = append(want, res.Recovered)
			}
			slices.Reverse(want)
			after := observe(t, path)
			assert.Equal(t, append(slices.Clone(want), before.Log...), after.Log, "the acknowledged commits, in order")
			assert.Len(t, after.All.Commits, len(before.All.Commits)+len(want))
			assert.Empty(t, after.All.Orphans)
			head := after.Reflogs["HEAD"]
			require.Len(t, head, len(before.Reflogs["HEAD"])+len(want))
			for i, h := range want {
				assert.Equal(t, h, head[i].New, "HEAD@{%d}", i)
			}
			assert.Equal(t, before.Reflogs["HEAD"], reindexed(head[len(want):]), "the older entries are as they were")
			requireUsable(t, path)
		})
	}
}

// reindexed numbers entries from 0 again, as a reflog read before newer
// entries were added.
func reindexed(es []tract.ReflogEntry) []tract.ReflogEntry {
	out := slices.Clone(es)
	for i := range out {
		out[i].Index = i
	}
	return out
}

// requireUsable checks that the repository at path takes a commit.
func requireUsable(t *testing.T, path string) {
	t.Helper()
	tr, err := tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	_, err = tr.User(context.Background(), "the repository is usable")
	require.NoError(t, err)
	rep, err := tr.Fsck(context.Background())
	require.NoError(t, err)
	assert.True(t, rep.OK(), "fsck problems: %v", rep.Problems)
}

// A repository the worker may only read, file and directory (as on a
// read-only mount): the reads work, every writing operation fails with a
// *ReadOnlyError, and nothing changes.
func TestFault_ReadOnlyRepository(t *testing.T) {
	path := newFaultRepo(t, withOrphans(10, 1<<10))
	before := observe(t, path)
	dir := filepath.Dir(path)
	// Root may write any file: the worker runs as nobody then, who may
	// read the file and nothing more.
	nobody := os.Geteuid() == 0
	t.Cleanup(func() {
		os.Chmod(dir, 0o700)
		os.Chmod(path, 0o600)
	})
	if nobody {
		for d := dir; strings.HasPrefix(d, os.TempDir()) && d != os.TempDir(); d = filepath.Dir(d) {
			require.NoError(t, os.Chmod(d, 0o755))
		}
		require.NoError(t, os.Chmod(path, 0o644))
	} else {
		require.NoError(t, os.Chmod(path, 0o444))
		require.NoError(t, os.Chmod(dir, 0o555))
	}
	ops := []string{"commit", "commit-many-small", "import-small", "import-pack", "compress-small",
		"gc", "reset-soft", "reset-hard", "branch", "checkout", "compact"}
	res := runFaultWorker(t, faultTask{DB: path, Ops: ops}, nobody)
	for _, op := range res.Ops {
		assert.True(t, op.ReadOnly, "%s: %s", op.Op, op.Err)
		assert.Empty(t, op.Acked, "%s acknowledged a write", op.Op)
	}
	assert.Equal(t, before.Log, res.Log, "the worker reads the history")
	assert.Equal(t, before, observe(t, path), "the repository is as it was")
}
