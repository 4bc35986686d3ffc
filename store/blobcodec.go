package store

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/dag"
)

// How a text (a blob's content) is kept in the file. A file this tract
// created, or compacted, is marked in its meta bucket (keyBlobForms), and
// then every blob value there — in the blobs bucket, a pack, the journal —
// starts with a form byte:
//
//	formRaw  the content as it is
//	formZstd a zstd frame of the content without the frame's 4-byte magic
//	         number; the frame names the dictionary it was compressed with
//	         (one of the dicts bucket) or none
//
// A file without the mark (one a tract before schema 9 wrote) keeps every
// value as the content itself, read and written so until `tract compact`
// rewrites it. Hashes are over the content, never over these bytes, so
// the form a text is kept in changes no object's identity.
const (
	formRaw  byte = 0
	formZstd byte = 1
)

var (
	// keyBlobForms in the meta bucket marks a file whose blob values
	// carry a form byte; its value is 1.
	keyBlobForms = []byte("blob-forms")
	// keyDict in the meta bucket names (4 bytes, big-endian) the
	// dictionary new texts are compressed with.
	keyDict = []byte("dict")
	// keyDictSeq in the meta bucket holds the last dictionary id the
	// file gave (4 bytes, big-endian), which compaction keeps.
	keyDictSeq = []byte("dict-seq")
	// keyDictLineage in the meta bucket is 16 random bytes given to a
	// file when it gets its forms, which compaction keeps: dictionary
	// ids are unique among the files that share it.
	keyDictLineage = []byte("dict-lineage")
	// bucketDicts holds the file's zstd dictionaries: 4-byte big-endian
	// id → the dictionary in zstd's format (its id inside it).
	bucketDicts = []byte("dicts")
)

// schemaForms is the schema of a file whose blob values carry a form
// byte: a tract that does not know them would read compressed bytes as
// texts.
const schemaForms = 9

// zstdMagic is the magic number every zstd frame starts with, which the
// stored form leaves out.
var zstdMagic = [4]byte{0x28, 0xb5, 0x2f, 0xfd}

// encoderConcurrency is how many texts an encoder compresses at once: a
// large batch is split over that many goroutines.
func encoderConcurrency() int { return min(runtime.GOMAXPROCS(0), 4) }

// minCompress is the smallest text compressed: below it the frame's
// header takes what compression would save.
const minCompress = 24

// maxCompress is the largest text compressed, and so the most a frame
// may decode to: a damaged frame header cannot make a read allocate
// more.
const maxCompress = 256 << 20

// blobCodec turns texts into their stored form and back for the
// transactions of one handle. It keeps one decoder, which knows every
// dictionary of the file it has seen, and one encoder, for the dictionary
// new texts use: neither is made per text. A dictionary never changes
// once written under its id, so what the codec loaded stays valid; a frame
// naming one it has not loaded (another process trained it) loads the
// file's dictionaries again.
type blobCodec struct {
	mu sync.Mutex
	// lineage is the "dict-lineage" of the file the codec's dictionaries
	// came from: ids are unique within a lineage only (a file put over
	// the path that is not a compaction of the old one has its own).
	lineage string
	dicts   map[uint32][]byte
	dec     *zstd.Decoder
	encID   uint32
	enc     *zstd.Encoder
	bufs    sync.Pool
}

// ErrBadBlobForm is wrapped by the error of a stored text that does not
// decode: an unknown form byte, a damaged frame, a dictionary the file
// does not hold.
var ErrBadBlobForm = errors.New("stored text does not decode")

// decoder returns the codec's decoder, made (again) with the dictionaries
// of tx when reload is set or there is none yet. It leaves out dictionary
// skip: one the transaction itself wrote, which a rollback could undo
// (and a later dictionary take its id), so the codec never keeps it.
func (c *blobCodec) decoder(tx *bolt.Tx, lineage string, skip uint32, reload bool) (*zstd.Decoder, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sameLineage(lineage)
	if c.dec != nil && !reload {
		return c.dec, nil
	}
	dicts := c.dicts
	if reload || dicts == nil {
		dicts = map[uint32][]byte{}
		if b := tx.Bucket(bucketDicts); b != nil {
			if err := b.ForEach(func(k, v []byte) error {
				if len(k) == 4 && binary.BigEndian.Uint32(k) != skip {
					dicts[binary.BigEndian.Uint32(k)] = bytes.Clone(v)
				}
				return nil
			}); err != nil {
				return nil, err
			}
		}
	}
	list := make([][]byte, 0, len(dicts))
	for _, d := range dicts {
		list = append(list, d)
	}
	dec, err := newDecoder(list...)
	if err != nil {
		return nil, fmt.Errorf("the file's dictionaries: %w: %w", ErrBadBlobForm, err)
	}
	// The decoder replaced is left to the collector, not closed: another
	// transaction may be decoding with it (it holds no goroutine).
	c.dicts, c.dec = dicts, dec
	return dec, nil
}

// newDecoder returns a decoder that knows dicts.
func newDecoder(dicts ...[]byte) (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderDicts(dicts...), zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(maxCompress))
}

// newEncoder returns an encoder for dictionary dict (nil: none).
func newEncoder(dict []byte) (*zstd.Encoder, error) {
	opts := []zstd.EOption{zstd.WithEncoderCRC(false), zstd.WithEncoderConcurrency(encoderConcurrency()), zstd.WithLowerEncoderMem(true),
		zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithWindowSize(1 << 20)}
	if dict != nil {
		opts = append(opts, zstd.WithEncoderDict(dict))
	}
	enc, err := zstd.NewWriter(nil, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBlobForm, err)
	}
	return enc, nil
}

// encoder returns an encoder for dictionary id (0: none) of tx's file,
// loading it when it is not the one the codec holds.
func (c *blobCodec) encoder(tx *bolt.Tx, lineage string, id uint32) (*zstd.Encoder, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sameLineage(lineage)
	if c.enc != nil && c.encID == id {
		return c.enc, nil
	}
	var d []byte
	if id != 0 {
		if d = dictionary(tx, id); d == nil {
			return nil, fmt.Errorf("dictionary %d: %w", id, ErrNotFound)
		}
		d = bytes.Clone(d)
	}
	enc, err := newEncoder(d)
	if err != nil {
		return nil, fmt.Errorf("dictionary %d: %w", id, err)
	}
	// The encoder replaced is left to the collector, as a decoder is.
	c.enc, c.encID = enc, id
	return enc, nil
}

// dictionary returns the bytes of dictionary id in tx, nil if none.
func dictionary(tx *bolt.Tx, id uint32) []byte {
	b := tx.Bucket(bucketDicts)
	if b == nil {
		return nil
	}
	return b.Get(binary.BigEndian.AppendUint32(nil, id))
}

// currentDict returns the id of the dictionary new texts of tx's file are
// compressed with, 0 when it has none.
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

// sameLineage forgets what the codec keeps when the file, of lineage l,
// is not of the lineage it came from. The caller holds c.mu.
func (c *blobCodec) sameLineage(l string) {
	if l != c.lineage {
		c.lineage, c.dicts, c.dec, c.enc, c.encID = l, nil, nil, nil, 0
	}
}

// encodeWith returns the stored form of text with enc (nil: never
// compressed): compressed when that is smaller, else the text behind
// formRaw. The result never shares memory with text.
func encodeWith(enc *zstd.Encoder, text []byte) []byte {
	if enc != nil && len(text) >= minCompress && len(text) <= maxCompress {
		// The frame is written 3 bytes in, so that its magic number's
		// last byte can become the form byte without a copy.
		buf := enc.EncodeAll(text, make([]byte, 3, 3+len(text)/2+32))
		if out := buf[6:]; len(out) < 1+len(text) {
			out[0] = formZstd
			return out
		}
	}
	out := make([]byte, 1+len(text))
	out[0] = formRaw
	copy(out[1:], text)
	return out
}

// decode returns the text of stored value v of a file with forms, with
// local (nil: none) the decoder of a dictionary the transaction wrote
// itself, with id skip. A raw text is returned as a slice of v; a
// compressed one in new memory.
func (c *blobCodec) decode(tx *bolt.Tx, lineage string, local *zstd.Decoder, skip uint32, v []byte) ([]byte, error) {
	if len(v) == 0 {
		return nil, fmt.Errorf("%w: an empty value", ErrBadBlobForm)
	}
	switch v[0] {
	case formRaw:
		return v[1:], nil
	case formZstd:
	default:
		return nil, fmt.Errorf("%w: unknown form %d", ErrBadBlobForm, v[0])
	}
	frame := c.frame(v[1:])
	defer c.bufs.Put(frame)
	if local != nil && frameDict(*frame) == skip {
		text, err := local.DecodeAll(*frame, nil)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadBlobForm, err)
		}
		return nonNil(text), nil
	}
	dec, err := c.decoder(tx, lineage, skip, false)
	if err != nil {
		return nil, err
	}
	text, err := dec.DecodeAll(*frame, nil)
	if errors.Is(err, zstd.ErrUnknownDictionary) {
		if dec, err = c.decoder(tx, lineage, skip, true); err != nil {
			return nil, err
		}
		text, err = dec.DecodeAll(*frame, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadBlobForm, err)
	}
	return nonNil(text), nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// frameDict returns the dictionary id a zstd frame's header names, 0 for
// none (or a header too short to say).
func frameDict(frame []byte) uint32 {
	if len(frame) < 5 {
		return 0
	}
	fhd := frame[4]
	at := 5
	if fhd&(1<<5) == 0 {
		at++ // the window descriptor
	}
	switch fhd & 3 {
	case 1:
		if at < len(frame) {
			return uint32(frame[at])
		}
	case 2:
		if at+2 <= len(frame) {
			return uint32(binary.LittleEndian.Uint16(frame[at:]))
		}
	case 3:
		if at+4 <= len(frame) {
			return binary.LittleEndian.Uint32(frame[at:])
		}
	}
	return 0
}

// frame returns, in a pooled buffer, the zstd frame of a stored frame
// without its magic number.
func (c *blobCodec) frame(body []byte) *[]byte {
	p, _ := c.bufs.Get().(*[]byte)
	if p == nil {
		p = new([]byte)
	}
	*p = append(append((*p)[:0], zstdMagic[:]...), body...)
	return p
}

// close releases the codec's decoder and encoder.
func (c *blobCodec) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dec != nil {
		c.dec.Close()
		c.dec = nil
	}
	if c.enc != nil {
		_ = c.enc.Close()
		c.enc = nil
	}
}

// textForms is a transaction's view of how its file keeps texts.
type textForms struct {
	codec *blobCodec
	// uncompressed keeps new texts as they are (BoltOptions.Uncompressed).
	uncompressed bool
	// known is set once forms and dict are read from the file.
	known   bool
	forms   bool   // the file's blob values carry a form byte
	dict    uint32 // the dictionary new texts are compressed with
	lineage string // the file's "dict-lineage"
	// trained is a dictionary this transaction wrote, with its encoder
	// and decoder: the codec keeps none of it (see decoder).
	trained    uint32
	trainedEnc *zstd.Encoder
	trainedDec *zstd.Decoder
}

// load reads the file's forms and dictionary once per transaction.
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
	return f.codec.decode(t.tx, f.lineage, f.trainedDec, f.trained, v)
}

// stored returns the value a blob of content text is stored as, in new
// memory. Every write of a text goes through it. A text bound for the
// journal (a write of a few objects) is kept as it is: an encoder's start,
// a millisecond or more, would double a single commit's work; the
// checkpoint compresses the journal's texts (compressTexts).
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

// textEncoder returns the encoder of the dictionary new texts use, nil
// when they are kept uncompressed.
func (t *boltTx) textEncoder() (*zstd.Encoder, error) {
	f := t.load()
	if f.uncompressed {
		return nil, nil
	}
	if f.trainedEnc != nil {
		return f.trainedEnc, nil
	}
	return f.codec.encoder(t.tx, f.lineage, f.dict)
}

// storedEntries returns entries with the content of every blob in its
// stored form, first training the file's dictionary when it has none and
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

// trainFrom trains a dictionary on texts and makes it the one this
// transaction's new texts (and, once it commits, every later one) are
// compressed with. A sample with too little in common leaves the file
// without one.
func (t *boltTx) trainFrom(texts [][]byte) error {
	f := t.load()
	id := nextDictID(t.tx)
	d, err := trainDict(trainSample(texts), id)
	if err != nil || d == nil {
		return err
	}
	enc, err := newEncoder(d)
	if err != nil {
		return err
	}
	dec, err := newDecoder(d)
	if err != nil {
		return err
	}
	if err := storeDict(t.tx, d, id); err != nil {
		return fmt.Errorf("store a dictionary: %w", err)
	}
	f.dict, f.trained, f.trainedEnc, f.trainedDec = id, id, enc, dec
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
	dicts [][]byte
	dec   *zstd.Decoder
	bad   bool
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
	case formZstd:
	default:
		return nil, false
	}
	if r.dec == nil && !r.bad {
		dec, err := newDecoder(r.dicts...)
		if err != nil {
			// A damaged dictionary: texts without one still read.
			dec, err = newDecoder()
		}
		r.dec, r.bad = dec, err != nil
	}
	if r.dec == nil {
		return nil, false
	}
	text, err := r.dec.DecodeAll(append(zstdMagic[:], v[1:]...), nil)
	if err != nil {
		return nil, false
	}
	text = nonNil(text)
	return text, dag.Sum(text) == h
}
