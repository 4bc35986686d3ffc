//go:build unix

package tract_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/llmtest"
	"github.com/tractdag/tract/retry"
)

// The repository's directory is removed while a handle is open: every
// call, reading or writing, fails with an error that names the file and
// says it is gone; nothing panics, and nothing makes the directory again.
func TestFault_RepositoryDirectoryVanishes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "project")
	path := filepath.Join(dir, ".tract", "tract.db")
	client, err := llm.NewOpenAI(llm.WithBaseURL(llmtest.NewServer(t).URL()), llm.WithModel("m"))
	require.NoError(t, err)
	tr, err := tract.Init(path, tract.WithNoSync(), tract.WithClient(client))
	require.NoError(t, err)
	hs, err := tr.CommitMany(ctx, faultMessages("before", 4, 100))
	require.NoError(t, err)
	_, err = tr.CreateBranch(ctx, "side", "HEAD~1")
	require.NoError(t, err)
	// A write through another handle takes the file's lock, so tr's
	// session of the file ends: its next call opens the file again (the
	// next test removes the directory while a session is open).
	other, err := tract.Open(path, tract.WithNoSync())
	require.NoError(t, err)
	_, err = other.User(ctx, "the last commit")
	require.NoError(t, err)
	require.NoError(t, other.Close())

	require.NoError(t, os.RemoveAll(dir))
	calls := []struct {
		name string
		call func() error
	}{
		{"Commit", func() error { _, err := tr.User(ctx, "into the void"); return err }},
		{"CommitMany", func() error { _, err := tr.CommitMany(ctx, faultMessages("void", 3, 10)); return err }},
		{"Import", func() error { _, err := tr.Import(ctx, faultMessages("void", 3, 10)); return err }},
		{"ImportSeq as a pack", func() error {
			_, err := tr.ImportSeq(ctx, importSeq(faultMessages("void", 20, 10)), tract.ImportBatch(4, 0))
			return err
		}},
		{"Chat", func() error { _, err := tr.Chat(ctx, "hello?", tract.Validate(retry.JSON())); return err }},
		{"Generate", func() error { _, err := tr.Generate(ctx); return err }},
		{"CompressRange", func() error { _, err := tr.CompressRange(ctx, "", "HEAD~1", tract.Summaries("gone")); return err }},
		{"Reset", func() error { _, err := tr.Reset(ctx, hs[0].String(), tract.Hard); return err }},
		{"GC", func() error { _, err := tr.GC(ctx, tract.GCExpiry(0)); return err }},
		{"Compact", func() error { _, err := tr.Compact(ctx); return err }},
		{"CreateBranch", func() error { _, err := tr.CreateBranch(ctx, "new", ""); return err }},
		{"DeleteBranch", func() error { _, err := tr.DeleteBranch(ctx, "side"); return err }},
		{"Checkout", func() error { _, err := tr.Checkout(ctx, "side"); return err }},
		{"Switch", func() error { _, err := tr.Switch(ctx, "other", true); return err }},
		{"Log", func() error { _, err := tr.Log(ctx); return err }},
		{"LogAll", func() error { _, err := tr.LogAll(ctx); return err }},
		{"Compile", func() error { _, err := tr.Compile(ctx); return err }},
		{"Status", func() error { _, err := tr.Status(ctx); return err }},
		{"Show", func() error { _, err := tr.Show(ctx, "HEAD"); return err }},
		{"Reflog", func() error { _, err := tr.Reflog(ctx, "HEAD"); return err }},
		{"Branches", func() error { _, err := tr.Branches(ctx); return err }},
		{"Fsck", func() error { _, err := tr.Fsck(ctx); return err }},
	}
	for _, c := range calls {
		err := c.call()
		if assert.Error(t, err, c.name) {
			assert.ErrorIs(t, err, tract.ErrNotRepository, "%s: %v", c.name, err)
			assert.Contains(t, err.Error(), path, c.name)
		}
		_, err = os.Stat(dir)
		assert.ErrorIs(t, err, fs.ErrNotExist, "%s made the directory again", c.name)
	}
	assert.NoError(t, tr.Close())
}

// The directory is removed between two commits of a burst, which share
// one open of the file: the commit after the removal fails, instead of
// going to the removed file and being lost with it.
func TestFault_RepositoryDirectoryVanishesMidBurst(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "project")
	tr, err := tract.Init(filepath.Join(dir, "tract.db"), tract.WithNoSync())
	require.NoError(t, err)
	defer tr.Close()
	for i := range 5 {
		_, err := tr.User(ctx, faultText("burst", i, 10))
		require.NoError(t, err)
	}
	require.NoError(t, os.RemoveAll(dir))
	_, err = tr.User(ctx, "after the directory was removed")
	assert.ErrorIs(t, err, tract.ErrNotRepository)
	_, err = tr.CommitMany(ctx, faultMessages("after", 2, 10))
	assert.ErrorIs(t, err, tract.ErrNotRepository)
}

// faultText returns a text of about size bytes, unique by tag and i. Its
// letters are drawn at random (seeded by tag and i), so that compression
// keeps most of its size: the sizes the tests grow files by hold.
func faultText(tag string, i, size int) string {
	head := fmt.Sprintf("%s %d ", tag, i)
	rng := rand.New(rand.NewPCG(uint64(len(tag)), uint64(i)))
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/"
	rest := make([]byte, max(size-len(head), 1))
	for j := range rest {
		rest[j] = letters[rng.IntN(len(letters))]
	}
	return head + string(rest)
}

// faultMessages returns n user/assistant messages of about size bytes.
func faultMessages(tag string, n, size int) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	for i := range msgs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: faultText(tag, i, size)}
	}
	return msgs
}
