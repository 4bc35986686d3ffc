package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store"
	"github.com/tractdag/tract/store/postgres"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// Importing the package registers its driver for both schemes.
func TestDriver_IsRegisteredForBothSchemes(t *testing.T) {
	assert.Subset(t, store.Drivers(), []string{"postgres", "postgresql"})
}

// Through the registry a URL is migrated, created, opened, bound to a
// context and dropped, as with the package's own functions.
func TestDriver_OpensThroughTheRegistry(t *testing.T) {
	ctx := context.Background()
	base := pgtest.URL(t)
	res, err := store.MigrateURL(ctx, base)
	require.NoError(t, err)
	assert.Equal(t, &store.MigrateResult{From: postgres.SchemaVersion, To: postgres.SchemaVersion}, res)

	for _, scheme := range []string{"postgres", "postgresql"} {
		t.Run(scheme, func(t *testing.T) {
			u := pgtest.RepositoryURL(t, base)
			u = scheme + u[strings.Index(u, "://"):]
			_, err := store.OpenURL(ctx, u, store.OpenOptions{})
			require.ErrorIs(t, err, store.ErrNotRepository)

			life, cancel := context.WithCancel(ctx)
			s, err := store.OpenURL(ctx, u, store.OpenOptions{Create: true, Context: life})
			require.NoError(t, err)
			defer s.Close()
			assert.IsType(t, &postgres.Store{}, s)
			assert.NotContains(t, s.Path(), passwordOf(t, u))
			err = s.View(ctx, func(tx store.Tx) error {
				if _, err := tx.Refs(); err != nil {
					return err
				}
				cancel()
				// The store's context reaches the transaction's through
				// context.AfterFunc, in a goroutine of its own: a read may
				// still get through before it does.
				for range 1000 {
					if _, err := tx.Refs(); err != nil {
						return err
					}
					time.Sleep(time.Millisecond)
				}
				return nil
			})
			require.ErrorIs(t, err, context.Canceled, "the store is bound to the context")

			_, err = store.OpenURL(ctx, u, store.OpenOptions{Create: true})
			require.ErrorIs(t, err, store.ErrExists)
			require.NoError(t, store.DropURL(ctx, u))
			_, err = store.OpenURL(ctx, u, store.OpenOptions{})
			require.ErrorIs(t, err, store.ErrNotRepository)
		})
	}
}

// A password given as a parameter of the URL, which pgx takes too, is
// hidden from Path as one in its user part is.
func TestPath_HidesAPasswordParameter(t *testing.T) {
	ctx := context.Background()
	u, err := url.Parse(pgtest.RepositoryURL(t, pgtest.URL(t)))
	require.NoError(t, err)
	pw := passwordOf(t, u.String())
	u.User = url.User(u.User.Username())
	q := u.Query()
	q.Set("password", pw)
	u.RawQuery = q.Encode()
	s, err := postgres.Create(ctx, u.String())
	require.NoError(t, err)
	defer s.Close()
	assert.NotContains(t, s.Path(), pw)
	assert.Contains(t, s.Path(), "password=xxxxx")
	assert.NotContains(t, postgres.Redact(u.String()), pw)
}
