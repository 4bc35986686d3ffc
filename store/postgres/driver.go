package postgres

import (
	"context"

	"github.com/tractdag/tract/store"
)

// init registers the driver of postgres:// and postgresql:// URLs, so
// that a program that imports this package opens them with store.OpenURL
// (and package tract's Open, Init and OpenStore).
func init() {
	store.Register("postgres", driver{})
	store.Register("postgresql", driver{})
}

// driver is package postgres as a store.Driver.
type driver struct{}

var (
	_ store.Driver   = driver{}
	_ store.Migrator = driver{}
	_ store.Dropper  = driver{}
)

// Open is Open, or Create with opts.Create; opts.Context is WithContext.
func (driver) Open(ctx context.Context, url string, opts store.OpenOptions) (store.Store, error) {
	var o []Option
	if opts.Context != nil {
		o = append(o, WithContext(opts.Context))
	}
	open := Open
	if opts.Create {
		open = Create
	}
	s, err := open(ctx, url, o...)
	if err != nil {
		return nil, err // not a nil *Store in a non-nil store.Store
	}
	return s, nil
}

// Migrate is Migrate.
func (driver) Migrate(ctx context.Context, url string) (*store.MigrateResult, error) {
	return Migrate(ctx, url)
}

// Drop is Drop.
func (driver) Drop(ctx context.Context, url string) error { return Drop(ctx, url) }
