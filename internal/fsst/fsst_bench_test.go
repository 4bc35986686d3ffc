package fsst

import "testing"

// The cost of a text of a few hundred bytes, encoded and decoded.
func BenchmarkEncode(b *testing.B) {
	sample := fsstSample(2000)
	tab, err := New(Train(sample, 8))
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	var n int
	for i := 0; b.Loop(); i++ {
		text := sample[i%len(sample)]
		buf = tab.Encode(buf[:0], text)
		n += len(text)
	}
	b.SetBytes(int64(n / b.N))
}

func BenchmarkDecode(b *testing.B) {
	sample := fsstSample(2000)
	tab, err := New(Train(sample, 8))
	if err != nil {
		b.Fatal(err)
	}
	codes := make([][]byte, len(sample))
	for i, text := range sample {
		codes[i] = tab.Encode(nil, text)
	}
	var n int
	for i := 0; b.Loop(); i++ {
		text, err := tab.Decode(codes[i%len(codes)])
		if err != nil {
			b.Fatal(err)
		}
		n += len(text)
	}
	b.SetBytes(int64(n / b.N))
}
