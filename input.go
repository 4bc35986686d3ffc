package tract

import (
	"io"
	"iter"

	"github.com/tractdag/tract/ingest"
)

// Reading messages to import (see package ingest).
type (
	// ImportMessage is one commit of a bulk Import or CommitMany: an
	// OpenAI message with tract's kind and metadata.
	ImportMessage = ingest.Message
	// Conversation is a conversation to import (see ImportConversations).
	Conversation = ingest.Conversation
	// ReadOption configures ReadMessages and ReadConversations.
	ReadOption = ingest.ReadOption
)

// ReadLimits makes ReadMessages enforce l (its unset fields at their
// defaults) instead of the default limits. ReadLimits(t.Limits()) reads
// what t takes.
func ReadLimits(l Limits) ReadOption { return ingest.ReadLimits(l) }

// ReadMessages returns the messages of r, read as a stream, in bounded
// memory: a JSON array of OpenAI messages or one such object per line
// (see ingest.ReadMessages).
func ReadMessages(r io.Reader, opts ...ReadOption) iter.Seq2[ImportMessage, error] {
	return ingest.ReadMessages(r, opts...)
}

// ReadConversations returns the conversations of r, read as a stream, in
// the OpenAI supervised fine-tuning format that tract export writes (see
// ingest.ReadConversations).
func ReadConversations(r io.Reader, opts ...ReadOption) iter.Seq2[Conversation, error] {
	return ingest.ReadConversations(r, opts...)
}

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
