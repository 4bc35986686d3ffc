package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// A repository Fsck found damaged is marked so in its meta bucket, under
// keyDamaged, and refuses writes from then on: writing more into a file
// that has lost data would bury the damage under new history. The mark
// goes when Fsck finds the file clean again (after it was restored, say),
// and a salvaged copy (Salvage) starts without it.
var keyDamaged = []byte("damaged")

// ErrDamaged is returned (wrapped in a *DamagedError) by writes to a
// repository that Fsck found damaged.
var ErrDamaged = errors.New("repository is marked damaged")

// DamagedError is returned by writes to a repository that Fsck found
// damaged. errors.Is(err, ErrDamaged) holds for it.
type DamagedError struct {
	// Path is the repository file. It is not part of the stored mark
	// (a file may be moved or copied): damaged sets it on reading.
	Path string `json:"-"`
	// Since is when Fsck found the damage.
	Since time.Time `json:"since"`
	// Problems is how many problems it found; First is the first of them.
	Problems int    `json:"problems"`
	First    string `json:"first"`
}

// Error returns the DamagedError message.
func (e *DamagedError) Error() string {
	return fmt.Sprintf("repository %s is marked damaged: fsck found %d problem(s) on %s (first: %s); writes are refused until it is salvaged into a new repository or checked clean again",
		e.Path, e.Problems, e.Since.Local().Format(time.DateTime), e.First)
}

// Is makes errors.Is(err, ErrDamaged) hold.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// damaged returns the damage mark of the file tx belongs to, or nil.
func damaged(tx *bolt.Tx, path string) error {
	m := tx.Bucket(bucketMeta)
	if m == nil {
		return nil
	}
	v := m.Get(keyDamaged)
	if v == nil {
		return nil
	}
	e := &DamagedError{}
	if err := json.Unmarshal(v, e); err != nil {
		e.First = "the mark itself is unreadable"
	}
	// Marks written before Path was left out of them hold "Path": "":
	// the path is always the one the file was opened by.
	e.Path = path
	return e
}

// recordDamage marks the file db has open as damaged when r has problems,
// and clears the mark when it has none. It needs a writable session; a
// file too damaged to write keeps whatever mark it had.
func recordDamage(db *bolt.DB, r *FsckReport, now time.Time) {
	defer func() { _ = recover() }() // a damaged file may make bbolt panic here too
	_ = db.Update(func(tx *bolt.Tx) error {
		m := tx.Bucket(bucketMeta)
		if m == nil {
			return nil
		}
		if r.OK() {
			if m.Get(keyDamaged) == nil {
				return nil
			}
			return m.Delete(keyDamaged)
		}
		v, err := json.Marshal(&DamagedError{Since: now, Problems: len(r.Problems), First: r.Problems[0].String()})
		if err != nil {
			return err
		}
		return m.Put(keyDamaged, v)
	})
}

// FsckFile checks the repository file at path. When bbolt can open it,
// that is Fsck on it (and the damage mark is set or cleared); when the file
// is too damaged for that, FsckFile reads it without bbolt, as Salvage
// does, and reports the pages it cannot read, the objects that fail their
// hash and each commit or text missing that a commit names. The error is
// non-nil only when the file cannot be read at all.
func FsckFile(path string, opts BoltOptions, fopts ...FsckOption) (*FsckReport, error) {
	b, openErr := OpenBolt(path, opts)
	if openErr == nil {
		defer b.Close()
		ctx := opts.Context
		if ctx == nil {
			ctx = context.Background()
		}
		return Fsck(ctx, b, fopts...)
	}
	if !errors.Is(openErr, ErrCorrupt) {
		return nil, openErr
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, openErr
		}
		return nil, fmt.Errorf("fsck %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("fsck %s: %w", path, err)
	}
	r := newFsckReport()
	r.add("file", "%s cannot be opened: %s", path, openFailure(openErr))
	fsckRaw(f, st.Size(), r)
	sortProblems(r)
	return r, nil
}

// fsckRaw reads the file r of size bytes without bbolt, as Salvage does,
// and adds what it finds to rep: the counts of what verifies, the pages
// it cannot read, the objects that fail their hash, and each commit or
// text that a commit which verifies names but that is missing (once, not
// once per commit of the history above it).
func fsckRaw(r io.ReaderAt, size int64, rep *FsckReport) {
	s := scanRaw(r, size, func(dag.Hash, []byte) {})
	p := s.plan()
	s.loseHistory(p, true)
	for _, ref := range p.unreached {
		s.lose("ref "+ref.Name, "points at missing commit %s", ref.Hash.Short())
	}
	rep.Blobs, rep.Commits, rep.Refs = len(s.blobs), len(s.commits), len(s.refs)
	rep.ReflogEntries = 0
	for _, es := range s.reflogs {
		rep.ReflogEntries += len(es)
	}
	for id, why := range s.file.unreadable {
		rep.add(fmt.Sprintf("page %d", id), "%s", why)
	}
	rep.Problems = append(rep.Problems, s.lost...)
}
