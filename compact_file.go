package tract

import (
	"context"
	"errors"
	"fmt"

	"github.com/tractdag/tract/store"
)

// CompactResult reports what Compact did.
type CompactResult struct {
	// Path is the repository file.
	Path string `json:"path"`
	// Before and After are the file's sizes in bytes.
	Before int64 `json:"before"`
	After  int64 `json:"after"`
}

// compacter is implemented by stores that can rewrite their file (bbolt).
type compacter interface {
	Compact(ctx context.Context) (before, after int64, err error)
}

// Compact rewrites the repository file without its free pages, so that it
// shrinks after GC or a hard Reset (which free pages but never give them
// back), and renames the new file over the old one, atomically. Nothing in
// the repository changes: the same commits, refs and reflogs, in fewer
// bytes. Other processes wait while it runs (it holds the file's write lock
// throughout) and then use the new file. It fails with errors.ErrUnsupported
// on a store that has no file.
func (t *Tract) Compact(ctx context.Context) (*CompactResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &CompactResult{Path: t.path}
	err := t.withStore(func(st store.Store) (err error) {
		c, ok := st.(compacter)
		if !ok {
			return fmt.Errorf("compact: %w: %s is not a file", errors.ErrUnsupported, t.path)
		}
		res.Before, res.After, err = c.Compact(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
