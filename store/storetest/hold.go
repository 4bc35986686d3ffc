package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/tractdag/tract/store"
)

// HoldWrite starts a write transaction on s that lasts until release is
// called (or the test ends), and returns once it runs: for tests of what
// other handles and processes see while a writer holds the store. Release
// it before closing s, which waits for the transaction.
func HoldWrite(t testing.TB, s store.Store) (release func()) {
	t.Helper()
	inside, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(done) }) }
	go func() {
		_ = s.Update(context.Background(), func(store.Tx) error {
			close(inside)
			<-done
			return nil
		})
	}()
	<-inside
	t.Cleanup(release)
	return release
}
