// Package export writes what leaves a repository for other tools:
// fine-tuning data sets (conversations and the answers of validated turns,
// one JSON object a line (JSONL), in the formats OpenAI's fine-tuning API
// and the TRL trainers read) and drawings of the history (Graphviz,
// Mermaid). It knows nothing of the repository: tract.Tract.Export reads
// the commits and hands them to a Writer; 'tract export' is the command
// line.
//
// A [Writer] writes one [Format]: [OpenAI] (supervised fine-tuning, one
// conversation a line, with optional per-message weights, see [Weights]),
// [OpenAIPreference] (OpenAI's DPO pairs), [TRLPreference] (TRL's DPO
// trainer) or [TRLKTO] (TRL's KTO trainer, one judged answer a line).
// [Writer.Conversation] writes a conversation, [Writer.Turn] the lines of a
// validated turn's accepted and rejected answers; call [Writer.Flush] at the
// end. Messages are written as encoding/json marshals llm.Message, without
// HTML escaping. ExampleWriter_Turn writes a turn in TRL's DPO format.
//
// A [GraphWriter] writes the other output: a drawing of a history, in
// Graphviz DOT ([GraphDot]) or as a Mermaid flowchart ([GraphMermaid]),
// from nodes ([GraphNode], one a commit, with a [NodeStyle]), edges
// ([GraphEdge]) and ref labels ([GraphRef]), escaping every label for its
// language. tract.Tract.WriteGraph feeds it; 'tract graph' is the command
// line.
//
// Every format's keys, in the order written, and the drawings' styles are
// documented in docs/export.md.
//
// # Caveats
//
// A Writer writes as it goes: when a message sequence fails part way, the
// line is left unfinished in the output. Write to a temporary file and
// keep it only when every call succeeded ('tract export -o' does).
package export
