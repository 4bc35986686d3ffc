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
