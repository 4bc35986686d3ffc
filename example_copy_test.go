package tract_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tractdag/tract"
)

// A repository copied into a new file: every object re-hashed on the
// way, refs and reflogs unchanged, the same history on both sides.
func ExampleCopy() {
	dir, err := os.MkdirTemp("", "tract-copy")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	src := filepath.Join(dir, "agent.db")
	t, err := tract.Init(src)
	if err != nil {
		panic(err)
	}
	if _, err := t.User(ctx, "What is BLAKE3?"); err != nil {
		panic(err)
	}
	if _, err := t.Assistant(ctx, "A cryptographic hash function."); err != nil {
		panic(err)
	}
	t.Close()

	res, err := tract.Copy(ctx, src, filepath.Join(dir, "copy.db"))
	if err != nil {
		panic(err)
	}
	fmt.Printf("copied %d commits, %d blobs, %d refs, %d reflog entries\n",
		res.Commits, res.Blobs, res.Refs, res.ReflogEntries)

	c, err := tract.Open(res.Destination)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	msgs, err := c.Compile(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(msgs[len(msgs)-1].Content)
	// Output:
	// copied 2 commits, 2 blobs, 2 refs, 4 reflog entries
	// A cryptographic hash function.
}
