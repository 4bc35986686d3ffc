package tract_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// BenchmarkPendingTurn measures the check 'tract chat' makes before every
// message (is the branch's last message unanswered?) on a 10,000-commit
// history: it reads the turn's few commits, so it does not grow with the
// branch.
func BenchmarkPendingTurn(b *testing.B) {
	ctx := context.Background()
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	_, err = tr.Import(ctx, chatHistory(10_000))
	require.NoError(b, err)
	_, err = tr.User(ctx, "unanswered")
	require.NoError(b, err)
	_, err = tr.Commit(ctx, tract.KindError, tract.RoleAssistant, "model call failed")
	require.NoError(b, err)

	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		turn, err := tr.PendingTurn(ctx)
		if err != nil || turn == nil || turn.Commits != 2 {
			b.Fatalf("PendingTurn = %+v, %v", turn, err)
		}
	}
}
