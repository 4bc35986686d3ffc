package store_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

// A repository file whose meta pages are damaged or cut off is a damaged
// repository (ErrCorrupt, which FsckFile reads around), while a file that
// is no bbolt file at all stays not a repository.
func TestOpenBolt_MetaDamageIsCorruptionNotAnotherFile(t *testing.T) {
	data, _ := populatedRepo(t)
	zeroed := bytes.Clone(data)
	clear(zeroed[:2*4096])
	tests := []struct {
		name    string
		content []byte
		corrupt bool
		wantMsg string
	}{
		{"both meta pages zeroed", zeroed, true, "neither meta page is valid"},
		{"cut inside the first page", data[:100], true, "the file is cut short: 100 bytes"},
		{"cut after the first page", data[:4096], true, "the file is cut short: 4096 bytes"},
		{"text", bytes.Repeat([]byte("not a bbolt file\n"), 2000), false, "not a tract repository"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.db")
			require.NoError(t, os.WriteFile(path, tt.content, 0o600))
			_, err := store.OpenBolt(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
			require.Error(t, err)
			assert.ErrorIs(t, err, store.ErrNotRepository, "a file OpenBolt cannot use")
			assert.Equal(t, tt.corrupt, errors.Is(err, store.ErrCorrupt), "%v", err)
			assert.ErrorContains(t, err, tt.wantMsg)

			r, err := store.FsckFile(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
			if !tt.corrupt {
				assert.ErrorIs(t, err, store.ErrNotRepository)
				return
			}
			require.NoError(t, err, "fsck reads a damaged file itself")
			assert.False(t, r.OK())
		})
	}
}

// With both meta pages gone there is no root to walk from, but FsckFile
// and Salvage find every object and ref page by page.
func TestSalvage_BothMetaPagesZeroed(t *testing.T) {
	data, _ := populatedRepo(t)
	dir := t.TempDir()
	intact := filepath.Join(dir, "intact.db")
	require.NoError(t, os.WriteFile(intact, data, 0o600))
	want, err := store.Salvage(context.Background(), intact, filepath.Join(dir, "from-intact.db"))
	require.NoError(t, err)
	require.Positive(t, want.Commits)

	damaged := bytes.Clone(data)
	clear(damaged[:2*4096])
	path := filepath.Join(dir, "r.db")
	require.NoError(t, os.WriteFile(path, damaged, 0o600))

	r, err := store.FsckFile(path, store.BoltOptions{})
	require.NoError(t, err)
	assert.False(t, r.OK())
	assert.Equal(t, want.Commits, r.Commits)

	out := filepath.Join(dir, "salvaged.db")
	rep, err := store.Salvage(context.Background(), path, out)
	require.NoError(t, err)
	assert.Equal(t, want.Commits, rep.Commits, "every commit is found page by page")
	assert.Equal(t, want.Refs, rep.Refs, "every ref")
	assert.Zero(t, rep.ReflogEntries, "the reflog is not placed without the meta pages")
	require.NotEmpty(t, rep.Lost)
	assert.Contains(t, rep.Lost[0].Message, "neither meta page is valid")

	check, err := store.FsckFile(out, store.BoltOptions{})
	require.NoError(t, err)
	assert.True(t, check.OK(), "%v", check.Problems)
}

// metaOf returns the page numbers the newer valid meta page of a bbolt
// file with 4096-byte pages names: its root bucket's and its free list's,
// and which meta page (0 or 1) it is.
func metaOf(t *testing.T, data []byte) (current int, root, freelist uint64) {
	t.Helper()
	le := binary.LittleEndian
	txid := func(page int) uint64 { return le.Uint64(data[page*4096+16+48:]) }
	current = 0
	if txid(1) > txid(0) {
		current = 1
	}
	m := data[current*4096+16:]
	return current, le.Uint64(m[16:]), le.Uint64(m[32:])
}

// Each kind of damage to the pages bbolt reads first (a meta page, the
// root bucket, the free list) is a problem fsck states in tract's words:
// which page, what is wrong with it, what became of the file. None leaks
// bbolt's panics or page-type codes, and none stops fsck with an error.
func TestFsckFile_DamagedMetaRootAndFreelistPagesInTractsWords(t *testing.T) {
	data, _ := populatedRepo(t)
	current, root, freelist := metaOf(t, data)
	older := 1 - current
	txid := binary.LittleEndian.Uint64(data[current*4096+16+48:])
	olderTxid := binary.LittleEndian.Uint64(data[older*4096+16+48:])
	zero := func(pages ...int) func([]byte) {
		return func(d []byte) {
			for _, p := range pages {
				clear(d[p*4096 : (p+1)*4096])
			}
		}
	}
	tests := []struct {
		name   string
		damage func([]byte)
		// object and want: a problem of that object whose message holds want.
		object, want string
	}{
		{"current meta page zeroed", zero(current), fmt.Sprintf("page %d", current),
			fmt.Sprintf("damaged meta page (all zeros): the file is read through meta page %d, as of transaction %d; a later transaction that page %d may have recorded is lost", older, olderTxid, current)},
		{"older meta page zeroed", zero(older), fmt.Sprintf("page %d", older),
			fmt.Sprintf("damaged meta page (all zeros): the file is read through meta page %d, as of transaction %d", current, txid)},
		{"meta page 0 zeroed", zero(0), "page 0", "damaged meta page (all zeros): the file is read through meta page 1"},
		{"meta page 1 zeroed", zero(1), "page 1", "damaged meta page (all zeros): the file is read through meta page 0"},
		{"meta page checksum", func(d []byte) { d[current*4096+16+40] ^= 0xff }, fmt.Sprintf("page %d", current),
			"damaged meta page (its checksum does not match its contents): the file is read through meta page"},
		{"meta page naming another page", func(d []byte) { d[current*4096] = 7 }, fmt.Sprintf("page %d", current),
			fmt.Sprintf("meta page with a damaged header (it holds the header of page 7); its meta data (transaction %d) is intact", txid)},
		{"meta page naming another page, checksum", func(d []byte) { d[older*4096] = 7; d[older*4096+16+40] ^= 0xff }, fmt.Sprintf("page %d", older),
			"damaged meta page (it holds the header of page 7; its checksum does not match its contents): the file is read through meta page"},
		{"meta page header marked as a leaf", func(d []byte) { d[older*4096+8] = 0x02 }, fmt.Sprintf("page %d", older),
			fmt.Sprintf("meta page with a damaged header (its header marks it as a leaf page); its meta data (transaction %d) is intact", olderTxid)},
		{"meta page header of no known kind", func(d []byte) { d[older*4096+8] = 0x40 }, fmt.Sprintf("page %d", older),
			"meta page with a damaged header (its header marks it as a page of no known kind)"},
		{"both meta pages zeroed", zero(0, 1), "file", "r.db cannot be opened: neither meta page is valid"},
		{"root bucket page zeroed", zero(int(root)), "file", fmt.Sprintf("page %d holds the header of page 0", root)},
		{"free list zeroed", zero(int(freelist)), "file",
			"r.db cannot be opened for writing: the free list is damaged: its page's header is not a free-list page's (it names page 0, a page of no known kind)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			damaged := bytes.Clone(data)
			tt.damage(damaged)
			path := filepath.Join(t.TempDir(), "r.db")
			require.NoError(t, os.WriteFile(path, damaged, 0o600))

			r, err := store.FsckFile(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
			require.NoError(t, err, "damage is reported as problems, not as an error")
			require.False(t, r.OK())
			found := false
			for _, p := range r.Problems {
				for _, leak := range []string{"panic", "assertion failed", "bbolt", "unknown<", "type/flags", "invalid freelist"} {
					assert.NotContains(t, p.String(), leak, "bbolt's words")
				}
				found = found || p.Object == tt.object && strings.Contains(p.Message, tt.want)
			}
			assert.True(t, found, "no problem of %s saying %q in %v", tt.object, tt.want, r.Problems)
		})
	}
}

// smallRepo writes a closed repository file of a few pages: one commit,
// its blob, a ref and its reflog entry.
func smallRepo(t *testing.T) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small.db")
	b, err := store.OpenBolt(path, store.BoltOptions{Create: true, NoSync: true})
	require.NoError(t, err)
	require.NoError(t, b.Update(context.Background(), func(tx store.Tx) error {
		blob, err := tx.PutBlob([]byte("hello"))
		if err != nil {
			return err
		}
		h, err := tx.PutCommit(&dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)})
		if err != nil {
			return err
		}
		if err := tx.AppendReflog(refs.HEAD, refs.Entry{New: h, Action: refs.ActionCommit, Message: "commit"}); err != nil {
			return err
		}
		return tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h})
	}))
	require.NoError(t, b.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// Every page of a small and a large repository zeroed in turn: fsck
// reports problems, never an error, and never in bbolt's words.
func TestFsckFile_EveryPageZeroedIsReportedInTractsWords(t *testing.T) {
	large, used := populatedRepo(t)
	for name, data := range map[string][]byte{"small": smallRepo(t), "large": large[:used]} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for page := range len(data) / 4096 {
				damaged := bytes.Clone(data)
				clear(damaged[page*4096 : (page+1)*4096])
				path := filepath.Join(dir, fmt.Sprintf("zero-%d.db", page))
				require.NoError(t, os.WriteFile(path, damaged, 0o600))
				r, err := store.FsckFile(path, store.BoltOptions{LockTimeout: 100 * time.Millisecond})
				require.NoError(t, err, "page %d zeroed: damage is reported as problems, not as an error", page)
				if page < 2 {
					assert.False(t, r.OK(), "meta page %d zeroed", page)
				}
				for _, p := range r.Problems {
					for _, leak := range []string{"panic", "assertion failed", "bbolt", "unknown<", "type/flags", "invalid freelist"} {
						assert.NotContains(t, p.String(), leak, "page %d zeroed", page)
					}
				}
			}
		})
	}
}
