package compress

import (
	"errors"
	"fmt"

	"github.com/tractdag/tract/llm"
)

var (
	// ErrEmptyRange is returned by Plan when it is given no items.
	ErrEmptyRange = errors.New("compress: empty range: no commits to compress")
	// ErrNothingToSummarize is returned, wrapped with the counts, by Plan
	// when every item of the range is pinned or dropped, so no summary
	// group remains.
	ErrNothingToSummarize = errors.New("compress: nothing to summarize")
	// ErrNoClient is returned, wrapped, by Summarize when Config has
	// neither a Client nor caller-supplied Content. It is llm.ErrNoClient.
	ErrNoClient = llm.ErrNoClient
)

// GroupError is returned by SummarizeAll when one group could not be
// summarized. It unwraps to the cause, so errors.As still finds a
// *retry.ExhaustedError or the model client's error.
type GroupError struct {
	// Index is the position of the failed group in the groups passed to
	// SummarizeAll.
	Index int
	// Ordinal counts the summarized groups from 1 up to the failed one;
	// Total is how many groups were to be summarized.
	Ordinal, Total int
	// Err is the cause.
	Err error
}

// Error returns the GroupError message.
func (e *GroupError) Error() string {
	return fmt.Sprintf("summary %d of %d: %v", e.Ordinal, e.Total, e.Err)
}

// Unwrap returns the error the GroupError wraps.
func (e *GroupError) Unwrap() error { return e.Err }
