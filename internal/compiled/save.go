package compiled

import (
	"context"
	"sort"

	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/store"
)

// Save writes the records that let a new process compile the chain
// ending at tip (not zero) from a few records: a record of the run of
// commits after the newest record on the chain, through tip. It does
// nothing when tx keeps no records or tip has its record already.
//
// Records are merged as a binary counter merges its bits: the new run
// takes over the record before it while that record's messages take no
// more bytes than the run's so far (and the two stay under maxRecord), so a
// chain grown one turn at a time keeps a few records per doubling of its
// size, and a message is written again a few times, not once per turn.
// A run longer than maxRecord, as the first Save of a long chain writes,
// is cut into records of about maxRecord.
func (c *Cache) Save(ctx context.Context, tx store.Tx, tip dag.Hash) error {
	ct, ok := tx.(store.ContextTx)
	if !ok || c.MinBytes < 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.load(ctx, tx, tip, false)
	if err != nil {
		return err
	}
	if !atLeast(c.msgs[:n], c.MinBytes) {
		return nil
	}
	if raw, err := ct.Context(tip); err != nil || raw != nil {
		return err
	}
	at := int(c.pos[tip])
	// The newest record on the chain before tip: the run starts after it.
	var prev dag.Hash
	from := 0
	var prevRec []byte
	j, err := newestRecord(ct, c.chain[:at])
	if err != nil {
		return err
	}
	if j >= 0 {
		raw, err := ct.Context(c.chain[j])
		if err != nil {
			return err
		}
		if _, total, _, _, err := checked(raw); err == nil && total == int(c.count[j]) {
			prev, from, prevRec = c.chain[j], total, raw
		}
	}
	size := 0
	for _, m := range c.msgs[from:n] {
		size += m.size()
	}
	var merged []dag.Hash
	for prevRec != nil {
		p, total, k, payload, err := checked(prevRec)
		if err != nil || total != from || len(payload) > size || len(payload)+size > maxRecord {
			break
		}
		var before []byte
		if !p.IsZero() {
			if before, err = ct.Context(p); err != nil {
				return err
			}
			if before == nil {
				break // a run whose record went: keep this one
			}
		}
		merged = append(merged, prev)
		size += len(payload)
		prev, from, prevRec = p, total-k, before
	}
	// The run from message from (after prev) through tip, cut into
	// records of about maxRecord at commits the cache knows.
	j = sort.Search(at+1, func(j int) bool { return int(c.count[j]) > from })
	start, last, bytes := from, from, 0
	for ; j <= at; j++ {
		end := int(c.count[j])
		for _, m := range c.msgs[last:end] {
			bytes += m.size()
		}
		last = end
		if j < at && bytes < maxRecord {
			continue
		}
		if err := ct.PutContext(c.chain[j], encode(prev, end, c.msgs[start:end]), merged); err != nil {
			return err
		}
		prev, start, bytes, merged = c.chain[j], end, 0, nil
	}
	return nil
}

// newestRecord returns the position in chain of the newest commit with a
// record, -1 when none has one; it asks about a page of commits at a
// time.
func newestRecord(ct store.ContextTx, chain []dag.Hash) (int, error) {
	for hi := len(chain); hi > 0; {
		lo := max(hi-256, 0)
		has, err := ct.HasContexts(chain[lo:hi])
		if err != nil {
			return -1, err
		}
		for i := len(has) - 1; i >= 0; i-- {
			if has[i] {
				return lo + i, nil
			}
		}
		hi = lo
	}
	return -1, nil
}

// atLeast reports whether msgs take min bytes or more in a record; it
// stops counting there.
func atLeast(msgs []Message, min int) bool {
	size := 0
	for _, m := range msgs {
		if size >= min {
			return true
		}
		size += m.size()
	}
	return size >= min
}
