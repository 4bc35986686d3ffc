// Package ingest reads what enters a repository: OpenAI chat messages
// (ReadMessages: a JSON array, or JSON lines) and conversations in the
// OpenAI fine-tuning format (ReadConversations), as streams in bounded
// memory, and the size limits that bound them and every commit (Limits,
// *TooLargeError). It is the mirror of package export.
//
// A Message is an OpenAI message with tract's kind and metadata. A message
// that is more than a role and a text (content parts, tool calls, a tool
// call id, a name, members tract has no field for) keeps the rest as its
// commit's shape (Message.Stored), which ShapedMessage turns back into the
// message; the storage is described in docs/encoding.md
// ("Message shapes").
//
// Errors name what was wrong and where: a *MessageError gives the
// message's position in the input (and its line), wrapping a
// *TooLargeError, a *llm.FieldError naming the member, or an error
// matching dag.ErrInvalidText, dag.ErrInvalidKind or dag.ErrInvalidRole.
package ingest
