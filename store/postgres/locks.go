package postgres

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Writers of one repository overlap (see Store.Update). What each kind of
// shared state relies on instead of a lock of the whole repository that
// every writer took exclusively:
//
//   - A ref that a transaction reads is locked with the read, its row FOR
//     NO KEY UPDATE (see sharedRefQuery), when it holds a commit: writers
//     of one branch take turns, each seeing the commit of the one before.
//     A symbolic ref (HEAD) is read without its lock, so that writers of
//     different branches do not queue on HEAD; the branch it names is
//     locked with it when it is the transaction's first ref. A ref given
//     to the caller without its lock (missing, symbolic, or read with
//     another) is checked when the transaction writes it: a missing one is
//     written by a plain INSERT, which fails with a unique violation when
//     another writer made it meanwhile, and any other is locked then and
//     compared with what was given (see SetRef). The loser runs again.
//   - Objects (blobs, commits, counters, compiled contexts) are immutable,
//     or a pure function of commits, and written with ON CONFLICT: two
//     writers of one object both succeed. Only a transaction that holds
//     the repository exclusively deletes one (see exclusive).
//   - Reflog entries are numbered by an identity column: appends never
//     conflict, and the entries of one ref come in the order its writers
//     took its lock. Rewriting a reflog is exclusive.
//   - The word index's documents written by a shared transaction are
//     unnumbered (see finishWords) until a transaction numbers them.
//   - Packs are rows of their own, locked by the transaction that appends
//     to one (see packTail); publishing one, and an import's COPY, which
//     looks up the rows there before it copies, are exclusive.

// errExclusive ends a shared transaction whose caller called what needs
// the repository to itself while it held refs locked: Update runs fn
// again, exclusively (see exclusive).
var errExclusive = errors.New("needs the repository exclusively")

// exclusive takes the repository exclusively for op, which deletes or
// rewrites what other writers may be using (an object, a reflog, the
// numbering of the word index), or reads the whole repository to decide
// what it writes. A shared transaction that has locked no ref it read
// (see Ref) takes the repository's lock exclusively there and then (one
// round trip), which waits for the shared writers at work to end; the
// reads it made before were of objects, which only a writer holding the
// repository exclusively deletes, or of refs, which it checks again when
// it writes them (see SetRef). One that has locked a ref it read would
// deadlock with a writer that holds the repository shared and waits for
// that ref (a reset --hard of a branch another writer commits on): it
// fails with errExclusive instead, and Update runs fn again from the
// start, exclusively. In an exclusive transaction it does nothing.
func (t *pgTx) exclusive(op string) error {
	if !t.shared {
		return nil
	}
	if t.readLocked {
		t.restart = true
		return fmt.Errorf("%s: %w", op, errExclusive)
	}
	if err := t.queryRow(lockRepositorySQL, t.s.repository, int32(repositoryLock)).Scan(new(int)); err != nil {
		return fmt.Errorf("%s: take the repository exclusively: %w", op, err)
	}
	t.shared = false
	return nil
}

// verdict returns what the transaction's end is, given err, its caller's
// error (nil when it returned none): errExclusive when a call asked for
// the repository exclusively, the lost race when a statement lost one
// (Update runs fn again for either, even if the caller took the error for
// another), else err.
func (t *pgTx) verdict(err error) error {
	switch {
	case t.restart:
		return errExclusive
	case t.race != nil && !retryable(err):
		return t.race
	}
	return err
}

// refsKey is the primary key of tract_refs, whose unique violation means
// that another writer made a ref the transaction read as missing.
const refsKey = "tract_refs_pkey"

// refRaceError is the error of a transaction that read ref Name without
// its lock and found it moved when it came to write it: another writer
// won the race, and Update runs the transaction again.
type refRaceError struct{ Name string }

func (e *refRaceError) Error() string {
	return fmt.Sprintf("ref %s moved since the transaction read it", e.Name)
}

// lockRef locks ref name's row for the rest of the transaction and checks
// that it holds want, the value the caller was given without the lock;
// otherwise the transaction lost a race (refRaceError).
func (t *pgTx) lockRef(name string, want []byte) error {
	var v []byte
	err := t.queryRow(`SELECT value FROM tract_refs WHERE repository = $1 AND name = $2 FOR NO KEY UPDATE`,
		t.s.repository, name).Scan(&v)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return err
	}
	if err != nil || !bytes.Equal(v, want) {
		race := &refRaceError{Name: name}
		if t.race == nil {
			t.race = race
		}
		return race
	}
	t.held[name] = true
	t.readLocked = true
	return nil
}

// sharedRefQuery is refQuery for a shared transaction: $2, when it holds
// a commit, is locked (FOR NO KEY UPDATE) and read as it stands once the
// lock is granted (a READ COMMITTED transaction reads a row it locks at
// its latest version), and so is the ref it names, when it is symbolic
// and $4 is 1. Each row says whether it is locked.
const sharedRefQuery = `WITH asked AS (
	SELECT name, value FROM tract_refs WHERE repository = $1 AND (name = $2 OR name = $3)
), target AS (
	SELECT convert_from(substring(value FROM 6), 'UTF8') AS name FROM asked
	WHERE name = $2 AND length(value) > 5 AND substring(value FROM 1 FOR 5) = '\x7265663a20'::bytea
), locked AS (
	SELECT name, value FROM tract_refs
	WHERE repository = $1 AND name = ANY (ARRAY[$2, CASE WHEN $4::bigint = 1 THEN (SELECT name FROM target) END])
		AND NOT (length(value) > 5 AND substring(value FROM 1 FOR 5) = '\x7265663a20'::bytea)
	FOR NO KEY UPDATE
), named AS (
	SELECT name, value FROM tract_refs WHERE repository = $1 AND name = (SELECT name FROM target)
), found AS (
	SELECT name, value, 1::bigint AS locked FROM locked
	UNION ALL
	SELECT name, value, 0 FROM (SELECT * FROM asked UNION ALL SELECT * FROM named) u
	WHERE NOT EXISTS (SELECT 1 FROM locked l WHERE l.name = u.name)
)
SELECT x.name, x.value, c.depth, c.messages, c.tokens, x.locked FROM found x
LEFT JOIN LATERAL (
	SELECT depth, messages, tokens FROM tract_counters WHERE repository = $1 AND hash = x.value LIMIT 1
) c ON true`
