package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// benchRepo imports n messages of about 300 bytes into a new repository.
func benchRepo(b *testing.B, n int) *tract.Tract {
	b.Helper()
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	msgs := make([]tract.ImportMessage, n)
	pad := strings.Repeat("lorem ipsum ", 24)
	for i := range msgs {
		msgs[i] = tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("message %d %s", i, pad)}
	}
	_, err = tr.Import(context.Background(), msgs)
	require.NoError(b, err)
	return tr
}

// BenchmarkLogAllOneline measures 'tract log --all --oneline' on 100,000
// commits without the process start: the outline, the texts and the
// drawing, written through a buffer.
func BenchmarkLogAllOneline(b *testing.B) {
	tr := benchRepo(b, 100_000)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, err := tr.Outline(ctx)
		require.NoError(b, err)
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		require.NoError(b, renderGraphAll(ctx, w, palette{}, o, 0, func(c *tract.CommitInfo) string { return oneLine(palette{}, c, 72, nil) }))
		require.NoError(b, w.Flush())
	}
}

// BenchmarkLogAllGraph measures 'tract log --all' on 100,000 commits that
// diverge: every 1,000th commit of the main line has a branch of 10
// commits, and every other one of those branches is deleted, its commits
// left as orphans. It includes the outline, the order, the columns and
// the texts, written through a buffer, as BenchmarkLogAllOneline.
func BenchmarkLogAllGraph(b *testing.B) {
	tr := benchRepo(b, 99_000)
	ctx := context.Background()
	o, err := tr.Outline(ctx)
	require.NoError(b, err)
	side := make([]tract.ImportMessage, 10)
	for i, h := range o.Commits {
		if i%1000 != 999 {
			continue
		}
		name := fmt.Sprintf("side-%d", i)
		_, err := tr.CreateBranch(ctx, name, h.String())
		require.NoError(b, err)
		for k := range side {
			side[k] = tract.ImportMessage{Role: tract.RoleUser, Content: fmt.Sprintf("%s message %d", name, k)}
		}
		_, err = tr.OnBranch(name).CommitMany(ctx, side)
		require.NoError(b, err)
		if i%2000 == 999 {
			_, err := tr.DeleteBranch(ctx, name)
			require.NoError(b, err)
		}
	}
	line := func(c *tract.CommitInfo) string { return oneLine(palette{}, c, 72, nil) }
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		o, err := tr.Outline(ctx)
		require.NoError(b, err)
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		require.NoError(b, renderGraphAll(ctx, w, palette{}, o, 0, line))
		require.NoError(b, w.Flush())
	}
}
