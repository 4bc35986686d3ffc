package store_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/internal/fuzzcheck"
	"github.com/tractdag/tract/store"
)

func FuzzDecodeCounters(f *testing.F) {
	for _, c := range []store.Counters{{}, {Depth: 1, Messages: 1, Tokens: 3}, {Depth: 1 << 40, Messages: 1 << 30, Tokens: 1 << 62}} {
		f.Add(c.Encode())
	}
	f.Add([]byte{})
	f.Add([]byte{1, 2})
	f.Add([]byte{1, 2, 3, 4})
	f.Add(binary.AppendUvarint([]byte{0, 0}, 1<<63))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := store.DecodeCounters(b)
		if err != nil {
			fuzzcheck.UserError(t, err)
			if !errors.Is(err, dag.ErrBadEncoding) {
				t.Fatalf("error %v does not wrap dag.ErrBadEncoding", err)
			}
			return
		}
		if c.Depth < 0 || c.Messages < 0 || c.Tokens < 0 {
			t.Fatalf("%x decodes to negative counters %+v", b, c)
		}
		if got := c.Encode(); !bytes.Equal(got, b) {
			t.Fatalf("Encode(DecodeCounters(b)) != b:\n b   %x\n got %x", b, got)
		}
	})
}
