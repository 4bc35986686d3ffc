package postgres_test

import (
	"testing"

	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres/pgtest"
	"github.com/tractdag/tract/store/storetest"
)

func TestConformance(t *testing.T) {
	base := pgtest.URL(t)
	storetest.Run(t, func(t *testing.T) store.Store { return pgtest.NewUnchecked(t, base) })
}
