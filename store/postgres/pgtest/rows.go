package pgtest

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/store/postgres"
)

// Value is one column of one row that belongs to a repository, as stored.
type Value struct {
	// Table and Column name it.
	Table, Column string
	// Key is the row's primary key, as PostgreSQL prints it.
	Key string
	// Data is the column's bytes: a bytea as it is, any other type as
	// its text.
	Data []byte
}

// String names the value for a failure message.
func (v Value) String() string { return fmt.Sprintf("%s.%s of row %s", v.Table, v.Column, v.Key) }

// Values returns every column of every live row of the repository u
// names, in every tract table of the database: what a test that a text is
// gone from a repository must search. (Rows deleted but not yet vacuumed
// are not read: they are the server's to reclaim.) It fails t on a tract
// table it does not know how to tie to a repository, so that a table a
// later schema adds is not silently left out of such tests.
func Values(t testing.TB, u string) []Value {
	t.Helper()
	repo := RepositoryOf(t, u)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, withoutRepository(t, u))
	require.NoError(t, err)
	defer conn.Close(ctx)

	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	rows, err := tx.Query(ctx, `
SELECT c.table_name, c.column_name, c.data_type
FROM information_schema.columns c
JOIN information_schema.tables t USING (table_schema, table_name)
WHERE c.table_schema = current_schema() AND c.table_name LIKE 'tract\_%' AND t.table_type = 'BASE TABLE'
ORDER BY c.table_name, c.ordinal_position`)
	require.NoError(t, err)
	tables := make(map[string][]column)
	var order []string
	for rows.Next() {
		var table, name, typ string
		require.NoError(t, rows.Scan(&table, &name, &typ))
		if _, ok := tables[table]; !ok {
			order = append(order, table)
		}
		tables[table] = append(tables[table], column{name, typ})
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, order, "no tract tables in the database")

	var out []Value
	for _, table := range order {
		cols := tables[table]
		var where string
		switch {
		case table == "tract_schema":
			continue // the database's, no repository's
		case table == "tract_repositories":
			where = "name = $1"
		case table == "tract_pack_entries":
			where = "pack IN (SELECT id FROM tract_packs WHERE repository = $1)"
		case hasColumn(cols, "repository"):
			where = "repository = $1"
		default:
			t.Fatalf("pgtest.Values does not know which rows of %s belong to a repository", table)
		}
		key := primaryKey(t, tx, table)
		selects := []string{"(" + strings.Join(key, ", ") + ")::text"}
		for _, c := range cols {
			if c.typ == "bytea" {
				selects = append(selects, quote(c.name))
			} else {
				selects = append(selects, "convert_to("+quote(c.name)+"::text, 'UTF8')")
			}
		}
		rows, err := tx.Query(ctx, "SELECT "+strings.Join(selects, ", ")+" FROM "+quote(table)+" WHERE "+where, repo)
		require.NoError(t, err)
		for rows.Next() {
			var k string
			data := make([][]byte, len(cols))
			dest := []any{&k}
			for i := range data {
				dest = append(dest, &data[i])
			}
			require.NoError(t, rows.Scan(dest...))
			for i, c := range cols {
				out = append(out, Value{Table: table, Column: c.name, Key: k, Data: data[i]})
			}
		}
		require.NoError(t, rows.Err())
	}
	return out
}

// Exec runs statement sql with args in the database u names (its
// repository parameter left out), for tests that damage a repository on
// purpose. It returns how many rows the statement touched.
func Exec(t testing.TB, u, sql string, args ...any) int64 {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, withoutRepository(t, u))
	require.NoError(t, err)
	defer conn.Close(ctx)
	tag, err := conn.Exec(ctx, sql, args...)
	require.NoError(t, err)
	return tag.RowsAffected()
}

// primaryKey returns the columns of table's primary key, in their order
// in the key (the row's ctid when it has none).
func primaryKey(t testing.TB, tx pgx.Tx, table string) []string {
	t.Helper()
	rows, err := tx.Query(context.Background(), `
SELECT a.attname
FROM pg_index i
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
WHERE i.indrelid = $1::regclass AND i.indisprimary
ORDER BY array_position(i.indkey, a.attnum)`, quote(table))
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	if len(names) == 0 {
		return []string{"ctid"}
	}
	for i, n := range names {
		names[i] = quote(n)
	}
	return names
}

// column is a column of a table, with its type.
type column struct{ name, typ string }

func hasColumn(cols []column, name string) bool {
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}

func quote(name string) string { return pgx.Identifier{name}.Sanitize() }

// RepositoryOf returns the name of the repository u names.
func RepositoryOf(t testing.TB, u string) string {
	t.Helper()
	parsed, err := url.Parse(u)
	require.NoError(t, err)
	if name := parsed.Query().Get("repository"); name != "" {
		return name
	}
	return postgres.DefaultRepository
}

// withoutRepository returns u without tract's own parameters: a URL pgx
// takes.
func withoutRepository(t testing.TB, u string) string {
	t.Helper()
	server, err := postgres.ServerURL(u)
	require.NoError(t, err)
	return server
}
