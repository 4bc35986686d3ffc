package tract

import "github.com/tractdag/tract/ingest"

// Size limits (see package ingest).
type (
	// Limits bound the size of what enters a repository, so that one
	// runaway input is refused with a *TooLargeError, before anything is
	// written, instead of filling memory and the file. A field of 0 (or
	// less) takes its default. Pass them to Open or Init with WithLimits,
	// and to ReadMessages with ReadLimits.
	Limits = ingest.Limits
	// A SizeLimit names one of the size limits of Limits.
	SizeLimit = ingest.SizeLimit
	// TooLargeError is returned for input over one of the size limits
	// (see Limits), before anything of it is written.
	TooLargeError = ingest.TooLargeError
)

// Default size limits and the names of the limits (see Limits).
const (
	DefaultMaxMessageSize = ingest.DefaultMaxMessageSize
	DefaultMaxMetaSize    = ingest.DefaultMaxMetaSize
	DefaultMaxInputSize   = ingest.DefaultMaxInputSize

	LimitMessageSize = ingest.LimitMessageSize
	LimitMetaSize    = ingest.LimitMetaSize
	LimitLineSize    = ingest.LimitLineSize
	LimitInputSize   = ingest.LimitInputSize
)

// WithLimits sets the repository's size limits (see Limits): the fields
// of l that are set replace the defaults, or what an earlier WithLimits
// set. Limits bound what enters; what a repository already holds is read
// whatever its size.
func WithLimits(l Limits) Option {
	return func(c *config) { c.limits = c.limits.Merge(l) }
}

// Limits returns the size limits the repository enforces, defaults filled
// in. ReadLimits(t.Limits()) makes ReadMessages read what t takes.
func (t *Tract) Limits() Limits { return t.limits }
