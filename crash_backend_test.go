package tract_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/fsst"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// crashBackend is where the crash test (runCrashTest) keeps its
// repository, and what its checks need to know of that storage.
type crashBackend struct {
	// name names the backend in the test's log.
	name string
	// location is the repository, as the parent opens it: a file's path
	// or a database URL; worker is the same repository as the worker
	// opens it.
	location, worker string
	// where names what read returns, in messages: "the file".
	where string
	// without are the operations the backend does not have, which the
	// worker does not draw.
	without map[string]bool
	// read returns the repository's storage as the checks search it for
	// the tags of texts: the file's bytes, every byte of it, or the values
	// of the repository's rows, one chunk each.
	read func() []crashChunk
	// locate says where the hits of each of tags lie, for the messages
	// about erased texts found.
	locate func(chunks []crashChunk, found map[string][]crashHit, tags []string) map[string]string
	// settle, when set, runs after each kill, before the checks: it waits
	// until the storage has finished with the killed worker.
	settle func()
	// strays, when set, counts the copies of the repository that killed
	// operations left beside it, and returns the tags they hold.
	strays func() (copies int, tags map[string]bool)
	// seed, when set, runs once on the new repository before the first
	// worker: the file gets the symbol table its texts are compressed
	// with.
	seed func(tr *tract.Tract)
}

// crashChunk is a piece of a repository's storage, read raw, or what a
// piece read raw decodes to.
type crashChunk struct {
	name string // "the file", "tract_blobs.data of row (…)"
	data []byte
	// decoded is set for the bytes of another chunk read as codes of a
	// symbol table: they count for no size, and their offsets are not
	// the file's.
	decoded bool
}

// crashHit is where a tag is: at offset off of chunk number chunk.
type crashHit struct{ chunk, off int }

// crashFileBackend keeps the repository in a bbolt file in a temporary
// directory; the checks read the whole file, free pages and all, and the
// file's every byte read as codes of each of its symbol tables: its
// texts are kept compressed (see seedSymbols), and a text's codes, left
// anywhere in the file, decode to it (fsst.Table.DecodeLoose).
func crashFileBackend(t *testing.T) *crashBackend {
	db := filepath.Join(t.TempDir(), "tract.db")
	return &crashBackend{
		name: "file", location: db, worker: db, where: "the file",
		read: func() []crashChunk {
			raw, err := os.ReadFile(db)
			require.NoError(t, err)
			chunks := []crashChunk{{name: "the file", data: raw}}
			tables, err := crashSymbolTables(db)
			require.NoError(t, err)
			for _, st := range tables {
				chunks = append(chunks, crashChunk{name: st.name, data: st.t.DecodeLoose(raw), decoded: true})
			}
			return chunks
		},
		locate: func(chunks []crashChunk, found map[string][]crashHit, tags []string) map[string]string {
			return crashLocateInFile(db, chunks, found, tags)
		},
		strays: func() (int, map[string]bool) {
			names, _ := filepath.Glob(db + ".compact-*")
			tables, _ := crashSymbolTables(db)
			in := make(map[string]bool)
			for _, name := range names {
				raw, err := os.ReadFile(name)
				if err != nil {
					continue
				}
				for tag := range crashTags(raw) {
					in[tag] = true
				}
				// A compaction's copy is compressed with a table of its
				// own, stored last: read its codes with it when it got
				// that far.
				own, _ := crashSymbolTables(name)
				for _, st := range append(own, tables...) {
					for tag := range crashTags(st.t.DecodeLoose(raw)) {
						in[tag] = true
					}
				}
			}
			return len(names), in
		},
		seed: func(tr *tract.Tract) { seedSymbols(t, tr, db) },
	}
}

// crashTable is a symbol table of a file, and how messages name it.
type crashTable struct {
	name string
	t    *fsst.Table
}

// crashSymbolTables returns the symbol tables the file at path holds
// (read with bbolt: the file is consistent between the worker's runs).
func crashSymbolTables(path string) ([]crashTable, error) {
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		return nil, err
	}
	defer bdb.Close()
	var out []crashTable
	err = bdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("dicts"))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			t, err := fsst.Parse(v)
			if err != nil {
				return fmt.Errorf("symbol table %x: %w", k, err)
			}
			out = append(out, crashTable{name: fmt.Sprintf("the file read as codes of its symbol table %x", k), t: t})
			return nil
		})
	})
	return out, err
}

// seedSymbols imports, before the first worker, texts enough for the
// file to train the symbol table its texts are then compressed with:
// words of the worker's texts, without tags (the checks follow none of
// them). Without it the worker's small batches would never train one,
// and the checks would search uncompressed texts only.
func seedSymbols(t *testing.T, tr *tract.Tract, db string) {
	rng := rand.New(rand.NewPCG(1, 2))
	msgs := make([]tract.ImportMessage, 1200)
	for i := range msgs {
		var b strings.Builder
		for b.Len() < 150+rng.IntN(150) {
			b.WriteString(crashWords[rng.IntN(len(crashWords))])
			b.WriteByte(' ')
		}
		msgs[i] = tract.ImportMessage{Role: []tract.Role{tract.RoleUser, tract.RoleAssistant}[i%2], Content: b.String()}
	}
	_, err := tr.Import(context.Background(), msgs)
	require.NoError(t, err)
	tables, err := crashSymbolTables(db)
	require.NoError(t, err)
	require.Len(t, tables, 1, "the seed trained the file's symbol table")
}

// crashWorkerApp is the application_name of the crash worker's sessions
// on PostgreSQL, by which the parent sees them end.
const crashWorkerApp = "tract-crash-worker"

// crashPostgresBackend keeps the repository in the PostgreSQL test
// database (skipping the test without one); the checks read every value
// of the repository's live rows (pgtest.Values). Compact, which only a
// file has, is not drawn.
func crashPostgresBackend(t *testing.T) *crashBackend {
	base := pgtest.URL(t)
	repo := pgtest.RepositoryURL(t, base)
	u, err := url.Parse(repo)
	require.NoError(t, err)
	q := u.Query()
	q.Set("application_name", crashWorkerApp)
	u.RawQuery = q.Encode()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	return &crashBackend{
		name: "postgres", location: repo, worker: u.String(), where: "the repository's rows",
		without: map[string]bool{crashCompact: true},
		read: func() []crashChunk {
			vals := pgtest.Values(t, repo)
			chunks := make([]crashChunk, len(vals))
			for i, v := range vals {
				chunks[i] = crashChunk{name: v.String(), data: v.Data}
			}
			return chunks
		},
		locate: func(chunks []crashChunk, found map[string][]crashHit, tags []string) map[string]string {
			where := make(map[string]string, len(tags))
			for _, tag := range tags {
				where[tag] = crashListHits(found[tag], func(hit crashHit) string {
					return fmt.Sprintf("%s at offset %d", chunks[hit.chunk].name, hit.off)
				})
			}
			return where
		},
		settle: func() {
			deadline := time.Now().Add(10 * time.Second)
			for {
				var n int
				require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE application_name = $1`, crashWorkerApp).Scan(&n))
				if n == 0 {
					return
				}
				require.True(t, time.Now().Before(deadline), "the killed worker's %d sessions still run after 10s", n)
				time.Sleep(time.Millisecond)
			}
		},
	}
}

// crashLocateInFile says where in the file db the tags are: offsets, and
// the kind of bbolt page each lies in (a free page, a page in use, or past
// the end of the database).
func crashLocateInFile(db string, chunks []crashChunk, found map[string][]crashHit, tags []string) map[string]string {
	where := make(map[string]string, len(tags))
	bdb, err := bolt.Open(db, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second, PreLoadFreelist: true})
	if err != nil {
		for _, tag := range tags {
			var offs []int
			for _, hit := range found[tag] {
				offs = append(offs, hit.off)
			}
			where[tag] = fmt.Sprintf("at offsets %v (pages unknown: %v)", offs, err)
		}
		return where
	}
	defer bdb.Close()
	size := bdb.Info().PageSize
	_ = bdb.View(func(tx *bolt.Tx) error {
		for _, tag := range tags {
			where[tag] = crashListHits(found[tag], func(hit crashHit) string {
				if chunks[hit.chunk].decoded {
					return fmt.Sprintf("in %s, at %d of what it decodes to", chunks[hit.chunk].name, hit.off)
				}
				return fmt.Sprintf("offset %d (page %d: %s)", hit.off, hit.off/size, crashPageKind(tx, hit.off/size))
			})
		}
		return nil
	})
	return where
}

// crashListHits describes the first four hits, and counts the rest.
func crashListHits(hits []crashHit, describe func(crashHit) string) string {
	var parts []string
	for i, hit := range hits {
		if i == 4 {
			parts = append(parts, fmt.Sprintf("and %d more", len(hits)-i))
			break
		}
		parts = append(parts, describe(hit))
	}
	return strings.Join(parts, ", ")
}

// crashPageKind names the kind of page id: "free", "leaf", "branch",
// "freelist", "overflow of leaf N", or past the database's end.
func crashPageKind(tx *bolt.Tx, id int) string {
	info, err := tx.Page(id)
	switch {
	case err != nil:
		return err.Error()
	case info == nil:
		return "past the end of the database"
	case info.Type == "free":
		return "free"
	}
	for p := 2; p <= id; {
		pi, err := tx.Page(p)
		if err != nil || pi == nil {
			break
		}
		if pi.Type == "free" {
			p++
			continue
		}
		if id <= p+pi.OverflowCount {
			if id == p {
				return pi.Type + " in use"
			}
			return fmt.Sprintf("overflow of %s page %d, in use", pi.Type, p)
		}
		p += pi.OverflowCount + 1
	}
	return "unknown"
}
