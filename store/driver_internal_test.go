package store

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeDriver opens a Memory and records what it was asked.
type fakeDriver struct {
	url  string
	opts OpenOptions
}

func (d *fakeDriver) Open(_ context.Context, url string, opts OpenOptions) (Store, error) {
	d.url, d.opts = url, opts
	return NewMemory(), nil
}

// migratingDriver is a fakeDriver that is a Migrator and a Dropper.
type migratingDriver struct {
	fakeDriver
	dropped string
}

func (d *migratingDriver) Migrate(context.Context, string) (*MigrateResult, error) {
	return &MigrateResult{From: 1, To: 2}, nil
}

func (d *migratingDriver) Drop(_ context.Context, url string) error {
	d.dropped = url
	return nil
}

func TestRegistry_OpensByScheme(t *testing.T) {
	ctx := context.Background()
	var r registry
	d := &fakeDriver{}
	r.register("Mem", d)
	assert.Equal(t, []string{"mem"}, r.schemes())

	type key struct{}
	life := context.WithValue(ctx, key{}, "life")
	s, err := r.open(ctx, "MEM://host/x", OpenOptions{Create: true, Context: life})
	require.NoError(t, err)
	assert.IsType(t, &Memory{}, s)
	assert.Equal(t, "MEM://host/x", d.url, "the driver gets the URL as written")
	assert.Equal(t, OpenOptions{Create: true, Context: life}, d.opts)

	_, err = r.open(ctx, "tract.db", OpenOptions{})
	assert.EqualError(t, err, "tract.db is not a URL (scheme://…)")
}

// A URL of the PostgreSQL backend, in a program that does not import it,
// fails with the package to import; any other scheme with the schemes
// the program has.
func TestRegistry_NoDriverSaysWhatToImport(t *testing.T) {
	ctx := context.Background()
	var r registry
	for _, tc := range []struct {
		url, pkg, text string
	}{
		{"postgres://u:secret@db/tract", "github.com/tractdag/tract/store/postgres",
			`no store driver registered for postgres:// URLs: the program must import _ "github.com/tractdag/tract/store/postgres", which registers it`},
		{"PostgreSQL://db/tract", "github.com/tractdag/tract/store/postgres",
			`no store driver registered for postgresql:// URLs: the program must import _ "github.com/tractdag/tract/store/postgres", which registers it`},
		{"mysql://u:secret@db/tract", "", "no store driver registered for mysql:// URLs (the program has no driver)"},
	} {
		_, err := r.open(ctx, tc.url, OpenOptions{})
		require.ErrorIs(t, err, ErrNoDriver, tc.url)
		var nd *NoDriverError
		require.ErrorAs(t, err, &nd)
		assert.Equal(t, tc.pkg, nd.Package)
		assert.Equal(t, tc.text, err.Error())
		_, err = r.migrate(ctx, tc.url)
		require.ErrorIs(t, err, ErrNoDriver)
		require.ErrorIs(t, r.drop(ctx, tc.url), ErrNoDriver)
	}
	r.register("postgres", &fakeDriver{})
	r.register("postgresql", &fakeDriver{})
	_, err := r.open(ctx, "mysql://db", OpenOptions{})
	assert.EqualError(t, err, "no store driver registered for mysql:// URLs (the program has drivers for postgres://, postgresql://)")
}

func TestRegistry_MigrateAndDropNeedTheirInterfaces(t *testing.T) {
	ctx := context.Background()
	var r registry
	r.register("plain", &fakeDriver{})
	m := &migratingDriver{}
	r.register("schema", m)

	_, err := r.migrate(ctx, "plain://u:secret@h/x")
	require.ErrorIs(t, err, errors.ErrUnsupported)
	assert.EqualError(t, err, "migrate plain://u:xxxxx@h/x: unsupported operation: its driver has no schema to migrate")
	err = r.drop(ctx, "plain://h/x")
	require.ErrorIs(t, err, errors.ErrUnsupported)

	res, err := r.migrate(ctx, "schema://h/x")
	require.NoError(t, err)
	assert.Equal(t, &MigrateResult{From: 1, To: 2}, res)
	require.NoError(t, r.drop(ctx, "schema://h/x"))
	assert.Equal(t, "schema://h/x", m.dropped)
}

// Registering is the program's own doing: a mistake in it panics, at
// init, as database/sql's Register does.
func TestRegister_PanicsOnMistakes(t *testing.T) {
	var r registry
	r.register("ok", &fakeDriver{})
	for name, f := range map[string]func(){
		"nil driver":             func() { r.register("other", nil) },
		"twice":                  func() { r.register("OK", &fakeDriver{}) },
		"one letter":             func() { r.register("c", &fakeDriver{}) },
		"not a scheme":           func() { r.register("1db", &fakeDriver{}) },
		"with the separator":     func() { r.register("db://", &fakeDriver{}) },
		"empty":                  func() { r.register("", &fakeDriver{}) },
		"a character not in one": func() { r.register("d_b", &fakeDriver{}) },
	} {
		assert.Panics(t, f, name)
	}
	assert.Equal(t, []string{"ok"}, r.schemes())
}
