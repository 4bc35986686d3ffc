package store

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fsst"
)

// How a text (a blob's content) is kept in the file. A file this tract
// created, or compacted, is marked in its meta bucket (keyBlobForms), and
// then every blob value there — in the blobs bucket, a pack, the journal —
// starts with a form byte:
//
//	formRaw     the content as it is
//	formSymbols the uvarint id of one of the file's symbol tables (the
//	            dicts bucket), then the content's codes in that table
//	            (internal/fsst)
//
// A file without the mark (one a tract before schema 9 wrote) keeps every
// value as the content itself, read and written so until `tract compact`
// rewrites it. Hashes are over the content, never over these bytes, so
// the form a text is kept in changes no object's identity.
const (
	formRaw     byte = 0
	formSymbols byte = 1
)

var (
	// keyBlobForms in the meta bucket marks a file whose blob values
	// carry a form byte; its value is 1.
	keyBlobForms = []byte("blob-forms")
	// keyDict in the meta bucket names (4 bytes, big-endian) the
	// symbol table new texts are compressed with.
	keyDict = []byte("dict")
	// keyDictSeq in the meta bucket holds the last table id the file
	// gave (4 bytes, big-endian), which compaction keeps.
	keyDictSeq = []byte("dict-seq")
	// keyDictLineage in the meta bucket is 16 random bytes given to a
	// file when it gets its forms, which compaction keeps: table ids are
	// unique among the files that share it.
	keyDictLineage = []byte("dict-lineage")
	// bucketDicts holds the file's symbol tables: 4-byte big-endian id →
	// the table (fsstTable.marshal).
	bucketDicts = []byte("dicts")
)

// schemaForms is the schema of a file whose blob values carry a form
// byte: a tract that does not know them would read compressed bytes as
// texts.
const schemaForms = 9

// encoderConcurrency is how many goroutines compress a large batch.
func encoderConcurrency() int { return min(runtime.GOMAXPROCS(0), 4) }

// minCompress is the smallest text compressed: below it the form's id
// takes what compression would save.
const minCompress = 8

// maxCompress is the largest text compressed.
const maxCompress = 256 << 20

// blobCodec keeps, for the transactions of one handle, the symbol tables
// of its file it has read, by id. A table never changes once written
// under its id, so what the codec loaded stays valid.
type blobCodec struct {
	// mu guards lineage and tables.
	mu sync.Mutex
	// lineage is the "dict-lineage" of the file the codec's tables came
	// from: ids are unique within a lineage only (a file put over the
	// path that is not a compaction of the old one has its own).
	lineage string
	tables  map[uint32]*fsst.Table
}

// ErrBadBlobForm is wrapped by the error of a stored text that does not
// decode: an unknown form byte, damaged codes, a symbol table the file
// does not hold.
var ErrBadBlobForm = errors.New("stored text does not decode")

// table returns symbol table id of tx's file, loaded once per lineage.
func (c *blobCodec) table(tx *bolt.Tx, lineage string, id uint32) (*fsst.Table, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if lineage != c.lineage || c.tables == nil {
		c.lineage, c.tables = lineage, map[uint32]*fsst.Table{}
	}
	if t := c.tables[id]; t != nil {
		return t, nil
	}
	v := dictionary(tx, id)
	if v == nil {
		return nil, fmt.Errorf("%w: symbol table %d is not in the file", ErrBadBlobForm, id)
	}
	t, err := fsst.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("symbol table %d: %w: %w", id, ErrBadBlobForm, err)
	}
	c.tables[id] = t
	return t, nil
}

// textEncoder compresses texts with one symbol table of a file. It is
// safe for concurrent use.
type textEncoder struct {
	t  *fsst.Table
	id uint32
}

// dictionary returns the bytes of symbol table id in tx, nil if none.
func dictionary(tx *bolt.Tx, id uint32) []byte {
	b := tx.Bucket(bucketDicts)
	if b == nil {
		return nil
	}
	return b.Get(binary.BigEndian.AppendUint32(nil, id))
}

// currentDict returns the id of the symbol table new texts of tx's file
// are compressed with, 0 when it has none.
func currentDict(tx *bolt.Tx) uint32 {
	if v := tx.Bucket(bucketMeta).Get(keyDict); len(v) == 4 {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

// hasForms reports whether the blob values of tx's file carry a form
// byte.
func hasForms(tx *bolt.Tx) bool { return tx.Bucket(bucketMeta).Get(keyBlobForms) != nil }

// markForms marks tx's file as one whose blob values carry a form byte,
// and raises its schema so that an older tract refuses it. Only an empty
// file, or one whose every blob value is written in a form, may be marked.
func markForms(tx *bolt.Tx) error {
	m := tx.Bucket(bucketMeta)
	if err := m.Put(keyBlobForms, []byte{1}); err != nil {
		return err
	}
	if m.Get(keyDictLineage) == nil {
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		if err := m.Put(keyDictLineage, id); err != nil {
			return err
		}
	}
	return raiseSchema(tx, schemaForms)
}

// encodeWith returns the stored form of text with enc (nil: never
// compressed): compressed when that is smaller, else the text behind
// formRaw. The result never shares memory with text.
func encodeWith(enc *textEncoder, text []byte) []byte {
	if enc != nil && len(text) >= minCompress && len(text) <= maxCompress {
		out := make([]byte, 0, 1+binary.MaxVarintLen32+len(text))
		out = binary.AppendUvarint(append(out, formSymbols), uint64(enc.id))
		if out = enc.t.Encode(out, text); len(out) < 1+len(text) {
			return out
		}
	}
	out := make([]byte, 1+len(text))
	out[0] = formRaw
	copy(out[1:], text)
	return out
}

// splitSymbols returns the table id and the codes of a formSymbols value
// without its form byte.
func splitSymbols(body []byte) (uint32, []byte, error) {
	id, n := binary.Uvarint(body)
	if n <= 0 || id > 1<<32-1 {
		return 0, nil, fmt.Errorf("%w: a damaged symbol table id", ErrBadBlobForm)
	}
	return uint32(id), body[n:], nil
}

// decode returns the text of stored value v of a file with forms, as
// transaction f reads it: a table the transaction trained itself (which
// the codec never keeps: a rollback could undo it, and a later table
// take its id) is f's, and the table of the last text f decoded is kept
// in f, so that a walk of many texts asks the codec (and takes its lock)
// once. A raw text is returned as a slice of v; a compressed one in new
// memory.
func (c *blobCodec) decode(tx *bolt.Tx, f *textForms, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("%w: an empty value", ErrBadBlobForm)
	}
	switch v[0] {
	case formRaw:
		return v[1:], nil
	case formSymbols:
	default:
		return nil, fmt.Errorf("%w: unknown form %d", ErrBadBlobForm, v[0])
	}
	id, codes, err := splitSymbols(v[1:])
	if err != nil {
		return nil, err
	}
	var t *fsst.Table
	switch {
	case f.trainedTable != nil && id == f.trained:
		t = f.trainedTable
	case f.lastTable != nil && id == f.lastID:
		t = f.lastTable
	default:
		if t, err = c.table(tx, f.lineage, id); err != nil {
			return nil, err
		}
		f.lastID, f.lastTable = id, t
	}
	text, err := t.Decode(codes)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBlobForm, err)
	}
	return text, nil
}

// textForms is a transaction's view of how its file keeps texts.
type textForms struct {
	codec *blobCodec
	// uncompressed keeps new texts as they are (BoltOptions.Uncompressed).
	uncompressed bool
	// known is set once forms and dict are read from the file.
	known   bool
	forms   bool   // the file's blob values carry a form byte
	dict    uint32 // the symbol table new texts are compressed with
	lineage string // the file's "dict-lineage"
	// trained is the id of a symbol table this transaction wrote, and
	// the table: the codec never keeps it (see decode).
	trained      uint32
	trainedTable *fsst.Table
	// lastID and lastTable are the table of the last text decoded.
	lastID    uint32
	lastTable *fsst.Table
}

// load reads the file's forms and symbol table once per transaction.
func (t *boltTx) load() *textForms {
	f := &t.texts
	if !f.known {
		f.known, f.forms, f.dict = true, hasForms(t.tx), currentDict(t.tx)
		f.lineage = string(t.tx.Bucket(bucketMeta).Get(keyDictLineage))
	}
	return f
}

// text returns the content of blob value v. Every read of a text from
// the blobs buckets, the packs or the journal goes through it.
func (t *boltTx) text(v []byte) ([]byte, error) {
	f := t.load()
	if !f.forms {
		return v, nil
	}
	return f.codec.decode(t.tx, f, v)
}

// stored returns the value a blob of content text is stored as, in new
// memory. Every write of a text goes through it. A text bound for the
// journal (a write of a few objects) is kept as it is: loading the
// symbol table in a process that has not (building its index) would add
// to a single commit's work; the checkpoint compresses the journal's
// texts (compressTexts).
func (t *boltTx) stored(text []byte, journal bool) ([]byte, error) {
	f := t.load()
	if !f.forms {
		return clone(text), nil
	}
	if journal {
		return encodeWith(nil, text), nil
	}
	enc, err := t.textEncoder()
	if err != nil {
		return nil, err
	}
	return encodeWith(enc, text), nil
}

// textEncoder returns the encoder of the symbol table new texts use, nil
// when they are kept uncompressed (or the file has no table).
func (t *boltTx) textEncoder() (*textEncoder, error) {
	f := t.load()
	if f.uncompressed {
		return nil, nil
	}
	if f.trainedTable != nil {
		return &textEncoder{t: f.trainedTable, id: f.trained}, nil
	}
	if f.dict == 0 {
		return nil, nil
	}
	tab, err := f.codec.table(t.tx, f.lineage, f.dict)
	if err != nil {
		return nil, err
	}
	return &textEncoder{t: tab, id: f.dict}, nil
}

// storedEntries returns entries with the content of every blob in its
// stored form, first training the file's symbol table when it has none and
// entries hold texts enough for one. entries is left as it was.
func (t *boltTx) storedEntries(entries []PackEntry) ([]PackEntry, error) {
	f := t.load()
	if !f.forms {
		return entries, nil
	}
	var texts [][]byte
	for _, e := range entries {
		if e.Kind == PackBlob {
			texts = append(texts, e.Value)
		}
	}
	if len(texts) == 0 {
		return entries, nil
	}
	if f.dict == 0 && !f.uncompressed && len(texts) >= trainMinTexts {
		if err := t.trainFrom(texts); err != nil {
			return nil, err
		}
	}
	enc, err := t.textEncoder()
	if err != nil {
		return nil, err
	}
	out := slices.Clone(entries)
	// A large batch is compressed on every processor: the encoder runs
	// that many calls at once.
	parts := 1
	if len(texts) >= 1024 {
		parts = encoderConcurrency()
	}
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			part := out[p*len(out)/parts : (p+1)*len(out)/parts]
			for i, e := range part {
				if e.Kind == PackBlob {
					part[i].Value = encodeWith(enc, e.Value)
				}
			}
		})
	}
	wg.Wait()
	return out, nil
}

// compressTexts compresses, in place, the texts of objects (stored values
// of the journal, on their way to a pack) that are kept as they are.
func (t *boltTx) compressTexts(objects []PackEntry) error {
	f := t.load()
	if !f.forms {
		return nil
	}
	enc, err := t.textEncoder()
	if err != nil || enc == nil {
		return err
	}
	for i, e := range objects {
		if e.Kind == PackBlob && len(e.Value) > 0 && e.Value[0] == formRaw {
			objects[i].Value = encodeWith(enc, e.Value[1:])
		}
	}
	return nil
}

// trainFrom trains a symbol table on texts and makes it the one this
// transaction's new texts (and, once it commits, every later one) are
// compressed with. A sample with too little in common leaves the file
// without one.
func (t *boltTx) trainFrom(texts [][]byte) error {
	f := t.load()
	id := nextDictID(t.tx)
	d := trainDict(trainSample(texts))
	if d == nil {
		return nil
	}
	tab, err := fsst.Parse(d)
	if err != nil {
		return err
	}
	if err := storeDict(t.tx, d, id); err != nil {
		return fmt.Errorf("store a symbol table: %w", err)
	}
	f.dict, f.trained, f.trainedTable = id, id, tab
	return nil
}

// textAt returns the text of blob h, nil when the file has none (or it
// does not decode: fsck reports that).
func (t *boltTx) textAt(h dag.Hash) []byte {
	v := t.getBlob(h)
	if v == nil {
		return nil
	}
	text, err := t.text(v)
	if err != nil {
		return nil
	}
	return text
}

// rawTexts reads texts where only their bytes are known, not whether
// their file keeps forms (a salvage's page scan): a value is taken in
// whichever reading hashes to its key.
type rawTexts struct {
	// dicts holds the stored symbol tables found, by id; tables those
	// of them that parsed.
	dicts  map[uint32][]byte
	tables map[uint32]*fsst.Table
}

// text returns the text blob value v under key h holds, and whether one
// of the readings hashes to h.
func (r *rawTexts) text(h dag.Hash, v []byte) ([]byte, bool) {
	if dag.Sum(v) == h {
		return v, true // a file without forms
	}
	if len(v) == 0 {
		return nil, false
	}
	switch v[0] {
	case formRaw:
		return v[1:], dag.Sum(v[1:]) == h
	case formSymbols:
	default:
		return nil, false
	}
	id, codes, err := splitSymbols(v[1:])
	if err != nil {
		return nil, false
	}
	t := r.tables[id]
	if t == nil {
		if t, err = fsst.Parse(r.dicts[id]); err != nil || r.dicts[id] == nil {
			return nil, false // a damaged table, or none
		}
		if r.tables == nil {
			r.tables = map[uint32]*fsst.Table{}
		}
		r.tables[id] = t
	}
	text, err := t.Decode(codes)
	if err != nil {
		return nil, false
	}
	return text, dag.Sum(text) == h
}
