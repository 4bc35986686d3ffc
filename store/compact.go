package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/internal/fsst"
)

// Compact rewrites the repository into a new file that holds only the pages
// in use, packed full, and renames it over the old file: a repository
// shrinks after gc or a hard reset, which leave freed pages behind (bbolt
// reuses them but never gives them back), and ends where its last page
// does (bbolt grows a file ahead of its pages). Published packs are merged
// into the main buckets on the way, so lookups search one place again.
// It never makes the file larger: when the rewritten file would not be
// smaller, the old one stays as it is. It returns the file's size before
// and after.
//
// It is an exclusive operation: it holds the file's write lock from start
// to rename, so other processes wait for it (up to their lock timeout).
// ctx bounds its own wait for the lock. The
// rename is atomic: a crash leaves the old file, or the new one, whole (and
// perhaps a stray "*.compact-*" file beside it, which the next Compact, or
// the next erasure, deletes). A
// process that was waiting for the old file's lock notices that the path
// now names another file and opens that one.
func (b *Bolt) Compact(ctx context.Context) (before, after int64, err error) {
	if b.readOnly {
		return 0, 0, b.errReadOnly()
	}
	// Refs published with a pack go to the refs bucket first (see
	// bolt_refsets.go), a batch per transaction, as MergePacks moves them.
	if err := b.foldRefsets(ctx); err != nil {
		return 0, 0, err
	}
	err = b.ss.sole(ctx, func(s *session) error {
		// Whatever happens, no transaction may use this session again: after
		// the rename its file is no longer the repository.
		defer func() {
			b.ss.mu.Lock()
			s.draining = true
			b.ss.mu.Unlock()
		}()
		st, err := s.file.Stat()
		if err != nil {
			return err
		}
		before = st.Size()
		if err := removeStrayCompactions(b.path); err != nil {
			return err
		}
		tmp, err := os.CreateTemp(filepath.Dir(b.path), filepath.Base(b.path)+compactionSuffix+"*")
		if err != nil {
			return err
		}
		name := tmp.Name()
		tmp.Close()
		defer os.Remove(name) // nothing to remove after the rename
		dst, err := bolt.Open(name, 0o600, &bolt.Options{NoSync: true, Timeout: time.Second})
		if err != nil {
			return err
		}
		if err := compactInto(dst, s.db, textForms{codec: b.codec, uncompressed: b.uncompressed}, 2<<20); err != nil {
			dst.Close()
			return err
		}
		var used int64
		if err := dst.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil }); err != nil {
			dst.Close()
			return err
		}
		if err := dst.Close(); err != nil {
			return err
		}
		if used >= before {
			after = before // the old file is as small: it stays
			return nil
		}
		if err := trimFile(name, used); err != nil {
			return err
		}
		if err := os.Rename(name, b.path); err != nil {
			return err
		}
		if err := syncDir(filepath.Dir(b.path)); err != nil {
			return err
		}
		st, err = os.Stat(b.path)
		if err != nil {
			return err
		}
		after = st.Size()
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", b.path, b.sessionError(err))
	}
	return before, after, nil
}

// trimFile cuts the file at path to size, the end of its last page in
// use, and syncs it. bbolt grows a file ahead of its pages, by up to its
// allocation step (16 MiB) at a time, and never gives the room back; a
// bbolt file may end where its pages do (it grows it again when it needs
// more).
func trimFile(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// compactInto copies src into dst, committing every txMaxSize bytes: every
// bucket as it is (with its sequence), except that the objects of
// published packs and of the journal are merged, in key order, into the
// top-level blobs and commits buckets, the journal's reflog entries
// are appended to the reflogs bucket's, and its word-index documents to
// the pending ones of the words bucket (as its checkpoint does). Every
// page is filled: keys arrive in order. Texts are written anew in their
// stored forms (blobcodec.go), compressed with one symbol table trained on
// the file's texts, which replaces src's: a file an older tract wrote
// gets its forms so.
func compactInto(dst, src *bolt.DB, forms textForms, txMaxSize int64) error {
	w := &copyWriter{db: dst, max: txMaxSize}
	defer w.rollback()
	err := src.View(func(stx *bolt.Tx) error {
		objects := &boltTx{tx: stx, texts: forms, res: &residency{}}
		enc, dict, id, err := compactDict(objects)
		if err != nil {
			return err
		}
		err = stx.ForEach(func(name []byte, b *bolt.Bucket) error {
			switch {
			case bytes.Equal(name, bucketPacks), bytes.Equal(name, bucketJournal), bytes.Equal(name, bucketDicts):
				return nil // merged below, or replaced
			case bytes.Equal(name, bucketContexts):
				// Records hold texts: written anew in their forms. One
				// that does not decode is left out (a cache: the
				// commits it covers are read instead).
				if err := w.create(nil, name, b.Sequence()); err != nil {
					return err
				}
				return b.ForEach(func(k, v []byte) error {
					rec, err := objects.restored(enc, v)
					if err != nil {
						return nil
					}
					return w.put([][]byte{name}, k, rec)
				})
			case bytes.Equal(name, bucketBlobs), bytes.Equal(name, bucketCommits):
				blobs := bytes.Equal(name, bucketBlobs)
				if err := w.create(nil, name, b.Sequence()); err != nil {
					return err
				}
				c := objects.cursor(!blobs)
				for k, v := c.First(); k != nil; k, v = c.Next() {
					objects.res.add(stx, len(k)+len(v))
					if blobs {
						var err error
						if v, err = objects.restored(enc, v); err != nil {
							return fmt.Errorf("blob %x: %w", k, err)
						}
					}
					if err := w.put([][]byte{name}, k, v); err != nil {
						return err
					}
				}
				return nil
			}
			return w.copyBucket(nil, name, b)
		})
		if err != nil {
			return err
		}
		j := objects.journal()
		for _, name := range j.reflogNames() {
			for _, raw := range j.reflog(name) {
				if err := w.appendNext(bucketReflogs, []byte(name), raw); err != nil {
					return err
				}
			}
		}
		if err := w.appendPendingDocs(stx.Bucket(bucketWords), j.wordDocs()); err != nil {
			return err
		}
		return w.finishForms(dict, id)
	})
	if err != nil {
		return err
	}
	return w.commit()
}

// compactDict returns the symbol table of a compacted file, with its
// encoder (nil when texts are kept uncompressed, or there is no table),
// its stored form and its id. The sample is the first trainSampleBytes of
// t's texts in hash order (which is no order of theirs). t's table is kept,
// under its id, when every symbol of it is still shared by as many texts
// of the sample as training would ask: erasures since it was trained left
// none of its symbols to texts that are gone, and texts stored with it are
// copied as they are. Else a table is trained on the sample, under an id
// t's file never used (a handle that read the old file, in this process
// or another, may keep its tables by id, and must not take the new one for
// one of those); a sample too small to train on leaves the file without
// one, its texts as they are.
func compactDict(t *boltTx) (*textEncoder, []byte, uint32, error) {
	id := nextDictID(t.tx)
	if t.texts.uncompressed {
		return nil, nil, id, nil
	}
	var texts [][]byte
	var size int
	c := t.cursor(false)
	for k, v := c.First(); k != nil && size < trainSampleBytes; k, v = c.Next() {
		text, err := t.text(v)
		if err != nil {
			return nil, nil, 0, fmt.Errorf("blob %x: %w", k, err)
		}
		if len(text) >= minCompress {
			texts = append(texts, bytes.Clone(text))
			size += len(text)
		}
	}
	sample := trainSample(texts)
	var d []byte
	if cur := t.load().dict; cur != 0 {
		if old := dictionary(t.tx, cur); old != nil && stillShared(old, sample) {
			id, d = cur, bytes.Clone(old)
		}
	}
	if d == nil {
		d = trainDict(sample)
	}
	if d == nil {
		return nil, nil, id, nil
	}
	tab, err := fsst.Parse(d)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("symbol table %d: %w: %w", id, ErrBadBlobForm, err)
	}
	return &textEncoder{t: tab, id: id}, d, id, nil
}

// restored returns stored value v of t's file in the form enc (nil:
// none) writes: v itself when it is codes of enc's table already, else its
// text encoded anew.
func (t *boltTx) restored(enc *textEncoder, v []byte) ([]byte, error) {
	if enc != nil && t.load().forms && len(v) > 0 && v[0] == formSymbols {
		if id, _, err := splitSymbols(v[1:]); err == nil && id == enc.id {
			return v, nil
		}
	}
	text, err := t.text(v)
	if err != nil {
		return nil, err
	}
	return encodeWith(enc, text), nil
}

// finishForms marks the copied file as one whose texts carry their forms,
// with symbol table d (nil: none), of id, as its only one.
func (w *copyWriter) finishForms(d []byte, id uint32) error {
	if err := w.commit(); err != nil {
		return err
	}
	if _, err := w.bucket(nil); err != nil {
		return err
	}
	if err := w.tx.Bucket(bucketMeta).Delete(keyDict); err != nil {
		return err
	}
	if d != nil {
		if err := storeDict(w.tx, d, id); err != nil {
			return err
		}
	}
	return markForms(w.tx)
}

// copyWriter writes into a bbolt file in transactions of bounded size.
type copyWriter struct {
	db   *bolt.DB
	tx   *bolt.Tx
	size int64
	max  int64
}

// bucket returns the bucket at path in the current transaction, starting
// one when there is none.
func (w *copyWriter) bucket(path [][]byte) (*bolt.Bucket, error) {
	if w.tx == nil {
		tx, err := w.db.Begin(true)
		if err != nil {
			return nil, err
		}
		w.tx = tx
	}
	if len(path) == 0 {
		return nil, nil
	}
	b := w.tx.Bucket(path[0])
	for _, name := range path[1:] {
		b = b.Bucket(name)
	}
	b.FillPercent = 1.0
	return b, nil
}

func (w *copyWriter) create(path [][]byte, name []byte, seq uint64) error {
	parent, err := w.bucket(path)
	if err != nil {
		return err
	}
	var b *bolt.Bucket
	if parent == nil {
		b, err = w.tx.CreateBucket(name)
	} else {
		b, err = parent.CreateBucket(name)
	}
	if err != nil {
		return err
	}
	return b.SetSequence(seq)
}

func (w *copyWriter) put(path [][]byte, k, v []byte) error {
	if err := w.room(len(k) + len(v)); err != nil {
		return err
	}
	b, err := w.bucket(path)
	if err != nil {
		return err
	}
	return b.Put(k, v)
}

// appendNext puts v under the next sequence number of bucket name in the
// top-level bucket parent, creating it if need be.
func (w *copyWriter) appendNext(parent, name, v []byte) error {
	if err := w.room(8 + len(v)); err != nil {
		return err
	}
	p, err := w.bucket([][]byte{parent})
	if err != nil {
		return err
	}
	return appendNext(p, name, v)
}

// appendPendingDocs appends docs, encoded pending documents, to the
// pending documents of the words bucket copied from src (nothing when src
// has none: the file's first write builds the index).
func (w *copyWriter) appendPendingDocs(src *bolt.Bucket, docs [][]byte) error {
	if src == nil || len(docs) == 0 {
		return nil
	}
	path := [][]byte{bucketWords}
	next, pending := wordsCounter(src, keyWordsNext), wordsCounter(src, keyWordsPending)
	for _, d := range docs {
		if err := w.put(path, docKey(prefixPending, next), d); err != nil {
			return err
		}
		next, pending = next+1, pending+1
	}
	if err := w.put(path, keyWordsNext, binary.AppendUvarint(nil, next)); err != nil {
		return err
	}
	return w.put(path, keyWordsPending, binary.AppendUvarint(nil, pending))
}

// room commits the current transaction unless n more bytes fit in it, and
// counts them.
func (w *copyWriter) room(n int) error {
	if w.size+int64(n) > w.max {
		if err := w.commit(); err != nil {
			return err
		}
	}
	w.size += int64(n)
	return nil
}

// copyBucket copies bucket b, named name under path, with everything in it.
func (w *copyWriter) copyBucket(path [][]byte, name []byte, b *bolt.Bucket) error {
	if err := w.create(path, name, b.Sequence()); err != nil {
		return err
	}
	inner := append(slices.Clip(path), name)
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if v == nil {
			if err := w.copyBucket(inner, k, b.Bucket(k)); err != nil {
				return err
			}
			continue
		}
		if err := w.put(inner, k, v); err != nil {
			return err
		}
	}
	return nil
}

func (w *copyWriter) commit() error {
	if w.tx == nil {
		return nil
	}
	tx := w.tx
	w.tx, w.size = nil, 0
	return tx.Commit()
}

func (w *copyWriter) rollback() {
	if w.tx != nil {
		_ = w.tx.Rollback()
	}
}
