// Package compress decides how a range of conversation history is
// compressed and produces the validated summaries that replace it. It knows
// nothing of stores, refs or transactions: the caller (tract's
// Tract.CompressRange) reads the range into Items, asks Plan for the new
// layout, gets the summaries from Summarize or SummarizeAll, has
// [Rebuild] build the new chain (the summaries' commits and the commits
// replayed after them) and stores it, all or nothing.
//
// [Plan] turns a range, oldest first, into [Group]s: pinned items (system
// messages by default; see [PinRoles] and [PinFunc]) are kept in place,
// errors and notes are dropped, and each run of the other items becomes one
// group that one summary replaces:
//
//	system  user  assistant  note  user  assistant  system  user  assistant
//	[keep]  [------------- summary 1 -----------]  [keep]  [- summary 2 -]
//	                         (dropped)
//
// [Summarize] asks a model for one group's summary ([DefaultPrompt], or
// [Config.Prompt]), or takes the caller's ([Config.Content]). Each summary
// must be non-empty, shorter than its source and within [Config.Tolerance]
// of [Config.TargetTokens], then pass [Config.Validator] (package retry's
// validators); a rejected one is retried with steering, in memory, and
// nothing is committed. [SummarizeAll] does every group and stops at the
// first failure with a [*GroupError]. Sizes are counted by a [Tokenizer]:
// by default [Estimator], four characters a token, plus [MessageOverhead] a
// message. ExamplePlan and ExampleSummarize show both steps.
//
// The plan's rules, the prompt, the built-in checks and their diagnoses,
// steering and token counting are documented in docs/compress.md.
//
// # Caveats
//
//   - Token counts are estimates unless the caller passes an exact
//     Tokenizer; label them so.
//   - A group of very short messages may have no summary shorter than it,
//     and then exhausts its attempts: leave it out of the range.
//   - Caller-supplied Content gets one attempt only.
package compress
