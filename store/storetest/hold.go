package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/tractdag/tract/store"
)

// HoldWrite starts a write transaction on s that lasts until release is
// called (or the test ends), and returns once it runs: for tests of what
// other handles and processes see while a writer holds the store. The
// transaction lists the refs first, which makes a store whose writers
// overlap (PostgreSQL's) hold the whole repository, as a file's writer
// does, so that every other writer waits for it. Release it before
// closing s, which waits for the transaction.
func HoldWrite(t testing.TB, s store.Store) (release func()) {
	t.Helper()
	inside, done := make(chan struct{}), make(chan struct{})
	var once, in sync.Once
	release = func() { once.Do(func() { close(done) }) }
	go func() {
		defer in.Do(func() { close(inside) }) // a transaction that failed holds nothing
		_ = s.Update(context.Background(), func(tx store.Tx) error {
			if _, err := tx.Refs(); err != nil {
				return err
			}
			in.Do(func() { close(inside) })
			<-done
			return nil
		})
	}()
	<-inside
	t.Cleanup(release)
	return release
}
