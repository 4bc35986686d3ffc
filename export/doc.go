// Package export writes fine-tuning data sets: conversations and the
// answers of validated turns, one JSON object a line (JSONL), in the
// formats OpenAI's fine-tuning API and the TRL trainers read. It knows
// nothing of the repository: tract.Tract.Export reads the commits and
// hands them to a Writer; 'tract export' is the command line.
//
// # Formats
//
// Messages are written as encoding/json marshals llm.Message
// ({"role":…,"content":…}, and whatever other fields llm.Message holds),
// without HTML escaping. Keys come in the order shown.
//
// OpenAI (supervised fine-tuning), one conversation a line:
//
//	{"messages":[{"role":"system","content":"…"},{"role":"user","content":"…"},{"role":"assistant","content":"…","weight":1}]}
//
//	messages  the conversation, oldest first
//	weight    on a message, optionally: 0 (not trained on) or 1, last key
//
// OpenAIPreference (OpenAI preference fine-tuning, DPO), one (accepted,
// rejected) pair a line:
//
//	{"input":{"messages":[…]},"preferred_output":[{"role":"assistant","content":"…"}],"non_preferred_output":[{"role":"assistant","content":"…"}]}
//
//	input.messages        the context the turn started from
//	preferred_output      the accepted answer, a list of one message
//	non_preferred_output  one rejected answer, a list of one message
//
// TRLPreference (TRL's DPO trainer, conversational), the same pairs:
//
//	{"prompt":[…],"chosen":[{"role":"assistant","content":"…"}],"rejected":[{"role":"assistant","content":"…"}]}
//
// TRLKTO (TRL's KTO trainer, conversational, unpaired), one answer a line:
//
//	{"prompt":[…],"completion":[{"role":"assistant","content":"…"}],"label":true}
//
//	label  true for the accepted answer, false for a rejected one
//
// # Caveats
//
// A Writer writes as it goes: when a message sequence fails part way, the
// line is left unfinished in the output. Write to a temporary file and
// keep it only when every call succeeded ('tract export -o' does).
package export
