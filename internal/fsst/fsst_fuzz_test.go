package fsst

import (
	"bytes"
	"testing"
)

// FuzzFSST: every text encodes and decodes back under a trained table,
// and a stored table or codes read from a damaged file (any bytes) are
// refused with an error or decoded, never a panic.
func FuzzFSST(f *testing.F) {
	tab, err := New(Train(fsstSample(500), 8))
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("Message 7: the answer is a JSON object"), tab.Marshal())
	f.Add([]byte{}, []byte{})
	f.Add([]byte{Escape, 0, 0xff}, []byte{3, 'a', 'b', 'c', 9})
	f.Fuzz(func(t *testing.T, text, stored []byte) {
		codes := tab.Encode(nil, text)
		back, err := tab.Decode(codes)
		if err != nil || !bytes.Equal(back, text) {
			t.Fatalf("round trip of %q: got %q, %v", text, back, err)
		}
		if _, err := tab.Decode(text); err == nil {
			_ = tab.DecodeLoose(text)
		}
		other, err := Parse(stored)
		if err != nil {
			return
		}
		codes = other.Encode(nil, text)
		if back, err := other.Decode(codes); err != nil || !bytes.Equal(back, text) {
			t.Fatalf("round trip of %q under a parsed table: got %q, %v", text, back, err)
		}
		_, _ = other.Decode(stored)
		_ = other.DecodeLoose(stored)
	})
}
