package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract/internal/words"
)

// BenchmarkMergeDocs merges 512 documents, as a merge of the pending ones
// does, into the recent posting blocks of an index that holds 40,000
// already: the texts of a proxy's calls under load (the load benchmark's
// questions, each answered with the same short text), whose common
// words top up their last block at every merge.
func BenchmarkMergeDocs(b *testing.B) {
	const batch = 512
	db, err := bolt.Open(filepath.Join(b.TempDir(), "words.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	context := strings.Repeat("Some context. ", 8)
	answer := words.Set("Noted; go on.")
	var next uint64
	docs := func() []indexDoc {
		out := make([]indexDoc, 0, batch)
		for len(out) < batch {
			n := next / 2
			ws := answer
			if next%2 == 0 {
				ws = words.Set(fmt.Sprintf("Conversation %d, question %d: what should the next step of the plan be, given what we said so far? %s", n/10, n%10, context))
			}
			out = append(out, indexDoc{id: next, time: int64(next), words: ws})
			next++
		}
		return out
	}
	merge := func(ds []indexDoc) error {
		return db.Update(func(tx *bolt.Tx) error {
			bk, err := tx.CreateBucketIfNotExists(bucketWords)
			if err != nil {
				return err
			}
			return appendDocs(bk, ds, prefixRecent)
		})
	}
	for next < 40_000 {
		if err := merge(docs()); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		ds := docs() // tokenised, as the pending documents are
		b.StartTimer()
		if err := merge(ds); err != nil {
			b.Fatal(err)
		}
	}
}
