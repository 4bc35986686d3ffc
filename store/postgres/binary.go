package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/tractdag/tract/store"
)

// The reads that carry most bytes (the walks of ForEachCommit and its kin,
// the pages of Blobs, Commits and CountersOf, Chain) go through binaryQuery
// rather than pgx's Query. In pgx.QueryExecModeExec, which the store uses
// so that no statement outlives its transaction, pgx sends every parameter
// and asks for every result in text: a bytea travels hex-encoded, twice
// its size, encoded by the server and decoded by the client (a tenth of
// `log --all`'s CPU time), and an array of hashes is quoted element by
// element. binaryQuery sends its parameters typed and in binary, and asks
// for binary results, in the same single round trip.

// PostgreSQL type OIDs of the parameters binaryQuery sends.
const (
	oidBytea      = 17
	oidInt8       = 20
	oidText       = 25
	oidByteaArray = 1001
)

// param is one parameter of binaryQuery: its type and binary value (nil
// for NULL).
type param struct {
	oid   uint32
	value []byte
}

func textParam(s string) param  { return param{oidText, []byte(s)} }
func byteaParam(b []byte) param { return param{oidBytea, b} }
func int8Param(n int64) param {
	return param{oidInt8, binary.BigEndian.AppendUint64(nil, uint64(n))}
}

// byteaArrayParam is a one-dimensional bytea[] of keys, in PostgreSQL's
// binary array format: dimensions, flags, element type, then each
// element's length and bytes.
func byteaArrayParam(keys [][]byte) param {
	size := 20
	for _, k := range keys {
		size += 4 + len(k)
	}
	b := make([]byte, 0, size)
	b = binary.BigEndian.AppendUint32(b, 1) // dimensions
	b = binary.BigEndian.AppendUint32(b, 0) // no NULLs
	b = binary.BigEndian.AppendUint32(b, oidBytea)
	b = binary.BigEndian.AppendUint32(b, uint32(len(keys)))
	b = binary.BigEndian.AppendUint32(b, 1) // lower bound
	for _, k := range keys {
		b = binary.BigEndian.AppendUint32(b, uint32(len(k)))
		b = append(b, k...)
	}
	return param{oidByteaArray, b}
}

// binaryQuery sends the queued writes, then runs sql with params, and
// calls fn with each row's columns in binary (NULL as nil). The columns
// are the driver's buffer, valid until fn returns: fn copies what it
// keeps. Its reply is bounded (see bound).
func (t *pgTx) binaryQuery(sql string, params []param, fn func(cols [][]byte) error) error {
	if err := t.flush(); err != nil {
		return err
	}
	values := make([][]byte, len(params))
	oids := make([]uint32, len(params))
	formats := make([]int16, len(params))
	for i, p := range params {
		values[i], oids[i], formats[i] = p.value, p.oid, 1
	}
	ctx, cancel := t.bound()
	defer cancel()
	conn := t.tx.Conn()
	var rr *pgconn.ResultReader
	if conn.Config().DefaultQueryExecMode == pgx.QueryExecModeCacheStatement {
		name, err := prepared(ctx, conn.PgConn(), sql, oids)
		if err != nil {
			return t.fail("a query", false, err)
		}
		rr = conn.PgConn().ExecPrepared(ctx, name, values, formats, []int16{1})
	} else {
		rr = conn.PgConn().ExecParams(ctx, sql, values, oids, formats, []int16{1})
	}
	var ferr error
	for ferr == nil && rr.NextRow() {
		ferr = fn(rr.Values())
	}
	_, err := rr.Close()
	if ferr != nil {
		return ferr
	}
	return t.fail("a query", false, err)
}

// preparedKey is the key of a connection's CustomData under which
// prepared keeps the names of the statements it prepared.
const preparedKey = "tract.prepared"

// prepared returns the name of sql prepared on conn (with parameters of
// oids), preparing it the first time (a round trip of its own): what
// binaryQuery runs when the URL asked for prepared statements
// (default_query_exec_mode=cache_statement), so that the server plans each
// of the store's reads once per connection rather than at every run. A
// statement is named by a hash of its text.
func prepared(ctx context.Context, conn *pgconn.PgConn, sql string, oids []uint32) (string, error) {
	names, _ := conn.CustomData()[preparedKey].(map[string]bool)
	if names == nil {
		names = map[string]bool{}
		conn.CustomData()[preparedKey] = names
	}
	sum := sha256.Sum256([]byte(sql))
	name := "tract_" + hex.EncodeToString(sum[:12])
	if names[name] {
		return name, nil
	}
	if _, err := conn.Prepare(ctx, name, sql, oids); err != nil {
		return "", err
	}
	names[name] = true
	return name, nil
}

// int8Col decodes a bigint column.
func int8Col(what string, b []byte) (int64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%s: a bigint of %d bytes: %w", what, len(b), store.ErrCorrupt)
	}
	return int64(binary.BigEndian.Uint64(b)), nil
}

// countersCols decodes the columns depth, messages and tokens.
func countersCols(what string, cols [][]byte) (c store.Counters, err error) {
	if len(cols) != 3 {
		return c, fmt.Errorf("%s: %d columns of counters: %w", what, len(cols), store.ErrCorrupt)
	}
	if c.Depth, err = int8Col(what, cols[0]); err == nil {
		if c.Messages, err = int8Col(what, cols[1]); err == nil {
			c.Tokens, err = int8Col(what, cols[2])
		}
	}
	return c, err
}
