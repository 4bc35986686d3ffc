package tests

import (
	"bufio"
	"context"
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
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

// writeLines writes n messages of about size bytes as JSON lines to name
// in the sandbox.
func (s *sandbox) writeLines(name string, n, size int) string {
	s.t.Helper()
	path := filepath.Join(s.dir, name)
	f, err := os.Create(path)
	require.NoError(s.t, err)
	w := bufio.NewWriter(f)
	pad := strings.Repeat("y", size)
	for i := range n {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		fmt.Fprintf(w, "{\"role\":%q,\"content\":\"message %d %s\"}\n", role, i+1, pad)
	}
	require.NoError(s.t, w.Flush())
	require.NoError(s.t, f.Close())
	return path
}

// An input larger than one batch goes in through a pack: all of it lands,
// fsck shows the pack, compact merges it.
func TestImport_LargeInputThroughAPack(t *testing.T) {
	s := newSandbox(t)
	s.initRepo()
	s.commit("system", "You answer briefly.")
	s.writeLines("big.jsonl", 16_000, 300) // about 5 MB: two batches
	r := s.ok("import", "big.jsonl")
	assert.Contains(t, r.Stderr, "Imported 16000 messages; HEAD is now at")
	assert.Contains(t, s.ok("log", "-n", "1").Stdout, "message 16000 ")
	assert.Contains(t, s.ok("status").Stdout, "16001 commits on the chain")
	fsck := s.ok("fsck").Stdout
	if onPostgres() { // a database has no parts to merge
		assert.Contains(t, fsck, "checked 16001 commits, 16001 blobs, ")
		assert.Contains(t, fsck, ": ok")
		return
	}
	assert.Contains(t, fsck, "checked 16001 commits, 16001 blobs (in 2 parts; 'tract compact' merges them)")
	assert.Contains(t, fsck, ": ok")
	s.ok("compact")
	fsck = s.ok("fsck").Stdout
	assert.Contains(t, fsck, "checked 16001 commits, 16001 blobs, ")
	assert.Contains(t, fsck, ": ok")
	assert.Contains(t, s.ok("log", "-n", "1").Stdout, "message 16000 ")
}

// An import killed while it writes its pack leaves the branch as it was
// and nothing visible: fsck notes the unfinished import, gc leaves it
// alone while it may be running (an hour, even with --expire now), and
// drops it after.
func TestImport_KilledMidway(t *testing.T) {
	fileOnly(t, "a database takes an import in one transaction (TestImport_KilledMidwayOnADatabase)")
	s := newSandbox(t)
	db := s.initRepo()
	s.commit("user", "before the import")
	before := s.ok("log", "--all", "--json").Stdout
	s.writeLines("big.jsonl", 120_000, 250) // about 33 MB: a pack of some 15 transactions

	imp := s.start("import", "big.jsonl")
	api := openAPI(t, db)
	st := api.Store()
	packs := func() []store.PackInfo {
		var out []store.PackInfo
		require.NoError(t, st.View(context.Background(), func(tx store.Tx) (err error) {
			out, err = tx.(store.PackTx).UnpublishedPacks()
			return err
		}))
		return out
	}
	deadline := time.Now().Add(commandTimeout)
	for len(packs()) == 0 {
		require.True(t, time.Now().Before(deadline), "the import never started its pack")
		time.Sleep(time.Millisecond)
	}
	// Hold the file so the import stops between two of its transactions,
	// then kill it there.
	release := storetest.HoldWrite(t, st)
	require.Len(t, packs(), 1, "the import is still writing its pack")
	require.NoError(t, imp.cmd.Process.Kill())
	_ = imp.cmd.Wait()
	release()

	assert.Equal(t, before, s.ok("log", "--all", "--json").Stdout, "the branch and history are as they were")
	fsck := s.ok("fsck").Stdout
	assert.Contains(t, fsck, "note: 1 unfinished import")
	assert.Contains(t, fsck, ": ok")
	assert.NotContains(t, s.ok("gc", "--expire", "now").Stdout, "unfinished", "an hour's grace: it may still be running")
	require.Len(t, packs(), 1)

	later, err := tract.Open(db, tract.WithClock(func() time.Time { return time.Now().Add(2 * time.Hour) }))
	require.NoError(t, err)
	defer later.Close()
	rm, err := later.GC(context.Background(), tract.GCExpiry(0))
	require.NoError(t, err)
	assert.Equal(t, 1, rm.UnfinishedImports)
	assert.Empty(t, packs())
	s.fsckOK()
	runs, err := filepath.Glob(filepath.Join(filepath.Dir(db), "tract-sort-*"))
	require.NoError(t, err)
	assert.Empty(t, runs, "a killed import leaves no sort files: they are unlinked at once")
}

// On a database an import lands in one transaction, its rows copied
// straight into their tables: killed while it copies the word index's
// documents (after every object), it leaves nothing, not even an
// unfinished import for gc to drop, and the same import then lands.
func TestImport_KilledMidwayOnADatabase(t *testing.T) {
	if !onPostgres() {
		t.Skip("database backend only: a file takes a large import as a pack (TestImport_KilledMidway)")
	}
	s := newSandbox(t)
	db := s.initRepo()
	s.commit("user", "before the import")
	before := s.ok("log", "--all", "--json").Stdout
	s.writeLines("big.jsonl", 40_000, 250) // about 11 MB: more than one batch

	app := fmt.Sprintf("tract-import-kill-%x", rand.Uint64())
	imp := s.withEnv("TRACT_DB", pgtest.WithQuery(t, db, "application_name", app)).start("import", "big.jsonl")
	pgtest.WaitForQuery(t, pgtest.URL(t), app, `copy "tract_words"`)
	require.NoError(t, imp.cmd.Process.Kill())
	_ = imp.cmd.Wait()

	assert.Equal(t, before, s.ok("log", "--all", "--json").Stdout, "the branch and history are as they were")
	fsck := s.ok("fsck").Stdout
	assert.Contains(t, fsck, ": ok")
	assert.NotContains(t, fsck, "unfinished")
	assert.NotContains(t, s.tract("search", "yyyy*").Stdout, "message")
	var blobs int
	require.NoError(t, openAPI(t, db).Store().View(context.Background(), func(tx store.Tx) error {
		return tx.ForEachBlob(func(dag.Hash, []byte) error { blobs++; return nil })
	}))
	assert.Equal(t, 1, blobs, "no text of the import is stored")

	s.ok("import", "big.jsonl")
	assert.Contains(t, s.ok("status").Stdout, "40001 commits on the chain")
	s.fsckOK()
}

// Four processes each import two files of the same 3,000 messages at
// once. Each import is a pack of its own on a file; the eighth makes a
// merge due, too large for one transaction, which the process that wrote
// it runs while the others go on. Every message lands, on one chain, and
// fsck finds the objects in two parts (the main buckets, empty here, and
// the merged pack), each text once.
func TestImport_ConcurrentImportsMergeTheirPacks(t *testing.T) {
	t.Parallel()
	const procs, files, each = 4, 2, 3000
	s := newSandbox(t).withEnv("TRACT_LOCK_TIMEOUT", "60s")
	s.initRepo()
	var shells []*background
	for p := range procs {
		script := ""
		for f := range files {
			name := fmt.Sprintf("p%d-f%d.jsonl", p, f)
			s.writeLines(name, each, 100)
			script += fmt.Sprintf(`"%s" import %s || exit 1; `, tractBin, name)
		}
		shells = append(shells, s.startShell(script))
	}
	for _, sh := range shells {
		r := sh.wait()
		require.Equal(t, 0, r.Code, r.String())
	}
	total := procs * files * each
	assert.Contains(t, s.ok("status").Stdout, fmt.Sprintf("%d commits on the chain", total))
	fsck := s.ok("fsck").Stdout
	assert.Contains(t, fsck, ": ok")
	if !onPostgres() {
		assert.Contains(t, fsck, fmt.Sprintf("checked %d commits, %d blobs (in 2 parts;", total, each), "the packs were merged")
	}
}
