package store_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tractdag/tract/store"
)

func TestIsURL(t *testing.T) {
	for loc, want := range map[string]bool{
		"postgres://db/tract":           true,
		"postgresql://u@db:5432/tract":  true,
		"svn+ssh://host/x":              true,
		"x.y-z://h":                     true,
		"tract.db":                      false,
		"/var/lib/tract.db":             false,
		"./postgres:/x":                 false,
		"C://Users/ada/tract.db":        false, // a Windows drive, not a scheme
		"dir/postgres://x":              false,
		"1db://x":                       false,
		"://x":                          false,
		`C:\Users\ada\.tract\tract.db`:  false,
		"file name with ://in the name": false,
	} {
		assert.Equal(t, want, store.IsURL(loc), loc)
	}
}

// Redact hides every password a URL can carry, with no driver imported
// (this package's tests import none).
func TestRedact_HidesPasswordsWithoutADriver(t *testing.T) {
	for loc, want := range map[string]string{
		"postgres://ada:s3cret@db:5432/tract?repository=bot":  "postgres://ada:xxxxx@db:5432/tract?repository=bot",
		"postgresql://ada@db/tract?password=s3cret&sslmode=1": "postgresql://ada@db/tract?password=xxxxx&sslmode=1",
		"postgres://db/tract?PassWord=a&password=b":           "postgres://db/tract?PassWord=xxxxx&password=xxxxx",
		"postgres://ada@db/tract":                             "postgres://ada@db/tract",
		"mysql://root:hunter2@db/x":                           "mysql://root:xxxxx@db/x",
		"postgres://ada:s3cret@db:port/x":                     "postgres://(malformed URL)",
		"postgres://ada:s3cret@db1:5432,db2:5433,db3/tract?target_session_attrs=read-write&password=s3cret": "postgres://ada:xxxxx@db1:5432,db2:5433,db3/tract?password=xxxxx&target_session_attrs=read-write",
		"postgres://ada:s3@c:ret@[::1]:5432,[::1]:5433/tract":                                               "postgres://ada:xxxxx@[::1]:5432,[::1]:5433/tract",
		"postgres://ada:s3cret@db1:5432,db2:x/tract?a=%zz":                                                  "postgres://(malformed URL)",
		"tract.db":                  "tract.db",
		"/home/ada/s3cret/tract.db": "/home/ada/s3cret/tract.db",
	} {
		assert.Equal(t, want, store.Redact(loc), loc)
	}
}
