package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/refs"
)

// smallRepository returns the bytes of a repository file holding a few
// commits, a branch and reflog entries.
func smallRepository(t testing.TB) []byte {
	path := filepath.Join(t.TempDir(), "tract.db")
	b, err := OpenBolt(path, BoltOptions{Create: true, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	parent := dag.Hash{}
	for i := range 20 {
		err := b.Update(context.Background(), func(tx Tx) error {
			blob, err := tx.PutBlob([]byte(fmt.Sprintf("message %d", i)))
			if err != nil {
				return err
			}
			c := &dag.Commit{Kind: dag.KindMessage, Role: dag.RoleUser, Blob: blob, Time: time.Unix(int64(i), 0).UTC()}
			if !parent.IsZero() {
				c.Parents = []dag.Hash{parent}
			}
			h, err := tx.PutCommit(c)
			if err != nil {
				return err
			}
			parent = h
			if err := tx.SetRef(refs.Ref{Name: "refs/heads/main", Hash: h}); err != nil {
				return err
			}
			return tx.AppendReflog("refs/heads/main", refs.Entry{New: h, Action: refs.ActionCommit, Message: "commit"})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// The reader of damaged files takes any bytes: it never panics, never
// reads past the file, and whatever it recovers verifies by its hash.
func FuzzScanRaw(f *testing.F) {
	good := smallRepository(f)
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(good[:8192])
	f.Add([]byte{})
	zeroed := bytes.Clone(good)
	clear(zeroed[2*4096 : 4*4096])
	f.Add(zeroed)
	noMeta := bytes.Clone(good)
	clear(noMeta[:2*4096]) // read page by page (scanLoose)
	f.Add(noMeta)
	f.Fuzz(func(t *testing.T, data []byte) {
		var blobs int
		s := scanRaw(bytes.NewReader(data), int64(len(data)), func(h dag.Hash, b []byte) {
			blobs++
			if dag.Sum(b) != h {
				t.Fatalf("recovered blob %s does not hash to its key", h.Short())
			}
		})
		for h, c := range s.commits {
			if dag.Sum(c.raw) != h {
				t.Fatalf("recovered commit %s does not hash to its key", h.Short())
			}
		}
		if blobs != len(s.blobs) {
			t.Fatalf("%d blobs handed over, %d recorded", blobs, len(s.blobs))
		}
		p := s.plan()
		s.loseHistory(p, false)
		for _, b := range p.boundaries {
			if _, ok := s.commits[b.Commit]; !ok {
				t.Fatalf("boundary %s is not a recovered commit", b.Commit.Short())
			}
			if _, ok := s.commits[b.LostParent]; ok {
				t.Fatalf("boundary %s: its parent %s was recovered", b.Commit.Short(), b.LostParent.Short())
			}
		}
	})
}

// An intact file is read whole: every commit and blob, the ref and the
// reflog, with nothing lost.
func TestScanRaw_IntactFile(t *testing.T) {
	data := smallRepository(t)
	s := scanRaw(bytes.NewReader(data), int64(len(data)), func(dag.Hash, []byte) {})
	if len(s.commits) != 20 || len(s.blobs) != 20 {
		t.Fatalf("read %d commits and %d blobs, want 20 of each", len(s.commits), len(s.blobs))
	}
	p := s.plan()
	if len(p.boundaries) != 0 || len(p.lostBlobs) != 0 || len(p.salvaged) != 0 || len(p.notes) != 0 || len(s.lost) != 0 || len(s.file.unreadable) != 0 {
		t.Fatalf("an intact file lost something: %v %v", s.lost, s.file.unreadable)
	}
	if len(s.refs) != 2 || len(s.reflogs["refs/heads/main"]) != 20 {
		t.Fatalf("refs %v, reflog %d entries", s.refs, len(s.reflogs["refs/heads/main"]))
	}
}
