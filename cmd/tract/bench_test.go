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
		require.NoError(b, renderGraphAll(ctx, w, palette{}, o, 0, func(c *tract.CommitInfo) string { return oneLine(palette{}, c, 72) }))
		require.NoError(b, w.Flush())
	}
}
