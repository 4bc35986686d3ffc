package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
)

func FuzzDecodePackInfo(f *testing.F) {
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	f.Add(uint64(1), encodePackInfo(PackInfo{ID: 1, Updated: at, Entries: 42}))
	f.Add(uint64(7), encodePackInfo(PackInfo{ID: 7, Updated: time.Unix(0, 0).UTC()}))
	f.Add(uint64(0), []byte{})
	f.Add(uint64(2), make([]byte, 15))
	f.Add(uint64(3), binary.BigEndian.AppendUint64(binary.BigEndian.AppendUint64(nil, 1<<63), 1<<63))
	f.Fuzz(func(t *testing.T, id uint64, b []byte) {
		p, err := decodePackInfo(id, b)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if !errors.Is(err, dag.ErrBadEncoding) {
				t.Fatalf("error %v does not wrap dag.ErrBadEncoding", err)
			}
			return
		}
		if p.ID != id || p.Updated.Location() != time.UTC || p.Entries < 0 {
			t.Fatalf("pack %d decodes as %+v", id, p)
		}
		if got := encodePackInfo(p); !bytes.Equal(got, b) {
			t.Fatalf("encodePackInfo(decodePackInfo(b)) != b:\n b   %x\n got %x", b, got)
		}
	})
}
