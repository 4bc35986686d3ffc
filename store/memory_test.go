package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/storetest"
)

func TestMemory_Conformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return store.NewMemory() })
}

func TestMemory_ClosedStoreRefusesTransactions(t *testing.T) {
	m := store.NewMemory()
	require.NoError(t, m.Close())
	assert.Error(t, m.View(context.Background(), func(store.Tx) error { return nil }))
	assert.Error(t, m.Update(context.Background(), func(store.Tx) error { return nil }))
	assert.Equal(t, store.MemoryPath, m.Path())
}

func TestMemory_TxUsedAfterItsClosureFails(t *testing.T) {
	m := storetest.NewMemory(t)
	var leaked store.Tx
	require.NoError(t, m.Update(context.Background(), func(tx store.Tx) error { leaked = tx; return nil }))
	_, err := leaked.PutBlob([]byte("late"))
	assert.Error(t, err)
	_, err = leaked.Refs()
	assert.Error(t, err)
}

func TestCounters_EncodeDecode(t *testing.T) {
	for _, c := range []store.Counters{{}, {Depth: 1, Messages: 1, Tokens: 3}, {Depth: 1 << 40, Messages: 1 << 39, Tokens: 1 << 62}} {
		got, err := store.DecodeCounters(c.Encode())
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
	for _, bad := range [][]byte{nil, {1}, {1, 2}, {1, 2, 3, 4}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 1, 1}} {
		_, err := store.DecodeCounters(bad)
		assert.ErrorIs(t, err, dag.ErrBadEncoding, "%x", bad)
	}
}
