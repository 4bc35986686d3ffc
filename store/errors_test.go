package store_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/refs"
	"github.com/tractdag/tract/store"
)

func TestErrNotFound_ReadsNotFoundAndMatchesRefs(t *testing.T) {
	err := fmt.Errorf("blob 1a2b3c: %w", store.ErrNotFound)
	assert.Equal(t, "blob 1a2b3c: not found", err.Error())
	assert.ErrorIs(t, err, store.ErrNotFound)
	assert.ErrorIs(t, err, refs.ErrNotFound)
	assert.False(t, errors.Is(refs.ErrNotFound, store.ErrNotFound), "a missing ref is not a missing object")
}
