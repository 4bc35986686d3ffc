package tests

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

// killRounds is how many times each kill test kills its command.
const killRounds = 12

// killSource makes a repository file of n imported messages to copy or
// salvage, at src.db in the sandbox's directory whatever the backend,
// and returns its path and its 'log --all --json'.
func killSource(s *sandbox, n int) (string, string) {
	src := filepath.Join(s.dir, "src.db")
	fs := s.withEnv("TRACT_DB", src)
	fs.ok("init")
	s.writeLines("in.jsonl", n, 150)
	fs.ok("import", "in.jsonl")
	return src, fs.ok("log", "--all", "--json").Stdout
}

// killAt runs args, killed after a random moment up to limit (after the
// end, now and then: then it finished), and says whether it was killed
// before it ended.
func killAt(s *sandbox, rng *rand.Rand, limit time.Duration, args ...string) bool {
	s.t.Helper()
	b := s.start(args...)
	time.Sleep(time.Duration(rng.Int64N(int64(limit))))
	killed := b.cmd.Process.Kill() == nil
	err := b.cmd.Wait()
	return killed && err != nil && b.cmd.ProcessState.ExitCode() == -1
}

// partials lists the partial files beside dst.
func partials(t *testing.T, dst string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tract-partial-*"))
	require.NoError(t, err)
	return got
}

// timeRun returns how long one run of args takes.
func timeRun(s *sandbox, args ...string) time.Duration {
	start := time.Now()
	s.ok(args...)
	return time.Since(start)
}

// A copy into a new file killed at random moments leaves DST as it was
// (absent) or whole and verifying, never in between; the next copy into
// DST removes the partial file a killed one left and succeeds. Before,
// a killed copy left DST holding a bbolt file without tract's metadata
// (the retry refused it, exit 8) or an empty repository.
func TestCopy_KilledAtRandomLeavesNothingInTheWay(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	src, want := killSource(s, 8_000)
	dst := filepath.Join(s.dir, "out", "dst.db")
	full := timeRun(s, "copy", src, dst)
	require.NoError(t, os.Remove(dst))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, a copy takes %s", seed, full)
	rng := rand.New(rand.NewPCG(seed, 1))
	fd := s.withEnv("TRACT_DB", dst)
	var killedMid, leftPartial int
	for round := range killRounds {
		killed := killAt(s, rng, full*3/2, "copy", src, dst)
		if left := partials(t, dst); len(left) > 0 {
			leftPartial++
		}
		if _, err := os.Stat(dst); err == nil {
			// Whole: it checks clean and holds what src does.
			fd.fsckOK()
			assert.Equal(t, want, fd.ok("log", "--all", "--json").Stdout, "round %d", round)
		} else {
			require.ErrorIs(t, err, os.ErrNotExist)
			if killed {
				killedMid++
			}
			s.ok("copy", src, dst)
			fd.fsckOK()
			assert.Equal(t, want, fd.ok("log", "--all", "--json").Stdout, "round %d: the retry copied everything", round)
		}
		assert.Empty(t, partials(t, dst), "round %d: the retry removed the partial file", round)
		require.NoError(t, os.Remove(dst))
	}
	t.Logf("%d of %d copies killed before the end, %d left a partial file", killedMid, killRounds, leftPartial)
}

// A partial file another copy into DST has open is not touched: the
// second copy is refused at once, saying so; one a killed copy left is
// removed by the next. One that cannot be removed is named, with the
// command that removes it.
func TestCopy_PartialFileOfARunningCopy(t *testing.T) {
	fileOnly(t, "partial files are beside a destination file")
	t.Parallel()
	s := newSandbox(t)
	src, _ := killSource(s, 100)
	dir := filepath.Join(s.dir, "out")
	require.NoError(t, os.Mkdir(dir, 0o700))
	dst := filepath.Join(dir, "dst.db")
	partial := filepath.Join(dir, ".dst.db.tract-partial-0123456789abcdef")
	// A partial file some process has open: a write transaction holds it.
	s.withEnv("TRACT_DB", partial).ok("init")
	holder, err := tract.Open(partial)
	require.NoError(t, err)
	release := storetest.HoldWrite(t, holder.Store())
	for _, args := range [][]string{{"copy", src, dst}, {"--db", src, "fsck", "--salvage", dst}} {
		r := s.tract(args...)
		requireExit(t, r, exitError)
		assert.Contains(t, r.Stderr, "another copy or salvage into it is running ("+partial+" is open)")
		assert.Contains(t, r.Stderr, "Wait for it to finish")
		_, err := os.Stat(partial)
		assert.NoError(t, err, "the open partial file stays")
	}
	release()
	require.NoError(t, holder.Close())

	s.ok("copy", src, dst)
	assert.Empty(t, partials(t, dst), "the partial file no one had open is gone")

	// A DST that is no repository, as a copy killed by an older tract,
	// which wrote DST in place, could leave: copy names it, with what to
	// do.
	require.NoError(t, os.WriteFile(dst, make([]byte, 8192), 0o600))
	r := s.tract("copy", src, dst)
	requireExit(t, r, exitNotFound)
	assert.Contains(t, r.Stderr, "If an interrupted copy\nleft it, remove it and copy again (rm "+dst+")")

	// One that cannot be removed (its directory is read-only).
	require.NoError(t, os.Remove(dst))
	require.NoError(t, os.WriteFile(partial, []byte("half"), 0o600))
	require.NoError(t, os.Chmod(dir, 0o500))
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if os.Geteuid() == 0 {
		t.Skip("root removes files in a read-only directory")
	}
	r = s.tract("copy", src, dst)
	assert.Contains(t, r.Stderr, "cannot remove "+partial+", which a killed copy or salvage left")
	assert.Contains(t, r.Stderr, "Remove it, then run the command again:\n  rm "+partial)
}

// fsck --salvage killed at random moments leaves no NEW (or a whole one
// that checks clean), and the rerun succeeds. Before, 22 of 25 killed
// salvages left a NEW that made the rerun fail with 'repository already
// exists'.
func TestSalvage_KilledAtRandomLeavesNothingInTheWay(t *testing.T) {
	fileOnly(t, "salvage reads and writes repository files")
	t.Parallel()
	s := newSandbox(t)
	src, want := killSource(s, 5_000)
	fs := s.withEnv("TRACT_DB", src)
	dst := filepath.Join(s.dir, "new.db")
	full := timeRun(fs, "fsck", "--salvage", dst)
	require.NoError(t, os.Remove(dst))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, a salvage takes %s", seed, full)
	rng := rand.New(rand.NewPCG(seed, 2))
	fd := s.withEnv("TRACT_DB", dst)
	var killedMid int
	for round := range killRounds {
		killed := killAt(fs, rng, full*3/2, "fsck", "--salvage", dst)
		if _, err := os.Stat(dst); err == nil {
			fd.fsckOK()
		} else {
			require.ErrorIs(t, err, os.ErrNotExist)
			if killed {
				killedMid++
			}
			assert.Contains(t, fs.ok("fsck", "--salvage", dst).Stdout, "checks clean", "round %d", round)
		}
		assert.Equal(t, want, fd.ok("log", "--all", "--json").Stdout, "round %d", round)
		assert.Empty(t, partials(t, dst), "round %d", round)
		require.NoError(t, os.Remove(dst))
	}
	t.Logf("%d of %d salvages killed before the end", killedMid, killRounds)
}

// A copy into a PostgreSQL repository has no file to rename: the copy
// makes the repository (one transaction) and writes the objects into a
// pack no reader sees, published with the refs in one last transaction.
// Killed at random moments, it leaves no repository, an empty one (an
// unpublished pack in it, which gc drops), or the whole copy; a copy
// into it again succeeds in the first two cases.
func TestCopy_KilledAtRandomIntoPostgres(t *testing.T) {
	t.Parallel()
	base := pgtest.URL(t)
	s := newSandbox(t)
	src, want := killSource(s, 2_000)
	full := timeRun(s, "copy", src, pgtest.RepositoryURL(t, base))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, a copy takes %s", seed, full)
	rng := rand.New(rand.NewPCG(seed, 3))
	states := map[string]int{}
	for round := range killRounds {
		dst := pgtest.RepositoryURL(t, base)
		fd := s.withEnv("TRACT_DB", dst)
		killAt(s, rng, full*3/2, "copy", src, dst)
		r := fd.tract("log", "--all", "--json")
		switch {
		case r.Code == exitOK && r.Stdout == want:
			states["whole"]++
		case r.Code == exitNotFound && strings.Contains(r.Stderr, "not a tract repository"):
			states["none"]++
			s.ok("copy", src, dst)
		case r.Code == exitOK:
			require.JSONEq(t, `{"commits": [], "orphans": []}`, r.Stdout, "round %d: a killed copy leaves the repository empty\n%s", round, r)
			states["empty"]++
			s.ok("copy", src, dst)
		default:
			t.Fatalf("round %d: %s", round, r)
		}
		fd.fsckOK()
		assert.Equal(t, want, fd.ok("log", "--all", "--json").Stdout, "round %d", round)
	}
	t.Logf("after the kill: %v", states)
}

// An import of conversations killed at random moments is all or nothing:
// every branch of it, or none (each branch at its conversation), the
// repository checks clean after each kill, and the import run again
// succeeds. The conversations are enough to go through a pack, whose
// branches a file stages and publishes as a refset, folded after (on
// PostgreSQL the publishing transaction sets them: the server's).
func TestImportConversations_KilledAtRandomIsAllOrNothing(t *testing.T) {
	fileOnly(t, "a repository file per round; the staged refs are the file's")
	t.Parallel()
	s := newSandbox(t)
	const n = 8_000 // about 3.4 MB: more than a batch
	path := filepath.Join(s.dir, "conversations.jsonl")
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `{"messages":[{"role":"system","content":"Answer briefly."},{"role":"user","content":"question %d %s"},{"role":"assistant","content":"answer %d %s"}]}`+"\n",
			i+1, strings.Repeat("q", 150), i+1, strings.Repeat("a", 180))
	}
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	repo := func(name string) *sandbox {
		r := s.withEnv("TRACT_DB", filepath.Join(s.dir, name+".db"))
		r.ok("init")
		return r
	}
	full := timeRun(repo("probe"), "import", "--format", "openai", path)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, an import takes %s", seed, full)
	rng := rand.New(rand.NewPCG(seed, 1))
	// Half the rounds of the other kill tests: each imports 8,000
	// branches, or more when it retries.
	const rounds = killRounds / 2
	var none, all int
	for round := range rounds {
		r := repo(fmt.Sprintf("round%d", round))
		killAt(r, rng, full*3/2, "import", "--format", "openai", path)
		switch got := strings.Count(r.ok("branch").Stdout, " import-"); got {
		case 0:
			none++
			r.fsckOK()
			r.ok("import", "--format", "openai", path)
		case n:
			all++
		default:
			t.Fatalf("round %d: the killed import left %d of its %d branches", round, got, n)
		}
		r.fsckOK()
		require.Equal(t, n, strings.Count(r.ok("branch").Stdout, " import-"), "round %d", round)
		assert.Contains(t, r.ok("log", "-1", "--format", "%s", fmt.Sprintf("import-%d", n)).Stdout, fmt.Sprintf("answer %d ", n), "round %d", round)
	}
	t.Logf("%d of %d killed imports left nothing (the retry imported all), %d left every branch", none, rounds, all)
}
