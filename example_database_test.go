package tract_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tractdag/tract"
	_ "github.com/tractdag/tract/store/postgres" // the driver of postgres:// URLs
)

// A repository in PostgreSQL: import the driver (import _
// "github.com/tractdag/tract/store/postgres"), create the schema once per
// database, then open repositories by URL as files are opened by path.
// The repository parameter names one of the database's repositories
// ("default" when absent); the password may come from the URL, PGPASSWORD
// or ~/.pgpass.
// (Not run as a test: it needs a database.)
func ExampleMigrate() {
	ctx := context.Background()
	url := os.Getenv("TRACT_DB") // e.g. postgres://agent@db.internal/tract?repository=support-bot
	if _, err := tract.Migrate(ctx, url); err != nil {
		panic(err)
	}
	t, err := tract.OpenOrInit(url)
	if err != nil {
		panic(err)
	}
	defer t.Close()
	t.User(ctx, "Hello from another machine")
	fmt.Println(t.Path()) // the URL without its password
}
