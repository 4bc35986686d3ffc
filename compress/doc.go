// Package compress decides how a range of conversation history is
// compressed and produces the validated summaries that replace it. It knows
// nothing of stores, refs or transactions: the caller (tract's
// Tract.CompressRange) reads the range into Items, asks Plan for the new
// layout, gets the summaries from Summarize or SummarizeAll and commits the
// result, all or nothing.
//
// # Planning
//
// [Plan] turns a range, oldest first, into [Group]s. Pinned items (those
// with [Item.Pinned] set, and by default system messages; see [PinRoles]
// and [PinFunc]) are kept in place, each as a group of its own with Keep
// set. Items of kind error and note are dropped: they are listed in
// [PlanResult.Dropped] and neither kept nor summarized. Each maximal run of
// the other items becomes one group that one summary replaces:
//
//	system  user  assistant  note  user  assistant  system  user  assistant
//	[keep]  [------------- summary 1 -----------]  [keep]  [- summary 2 -]
//	                         (dropped)
//
// An empty range is [ErrEmptyRange]; a range with nothing left to summarize
// is [ErrNothingToSummarize].
//
// # Summarizing
//
// [Summarize] asks a model for a summary of one group with [DefaultPrompt]
// (or [Config.Prompt]): [SystemPrompt], then the group's messages as a
// "role: text" [Transcript], the target size and extra instructions when
// given, and a request to reply with the summary only. The caller may give
// the summary instead ([Config.Content]); no model is called then.
//
// Each summary is checked by built-in checks, then by [Config.Validator]
// (the validators of package retry, such as those retry.ParseSpecs builds
// from the command line's spec strings). The built-in checks reject an
// empty summary, a summary that is not shorter than its source, and one
// over [Config.TargetTokens] by more than [Config.Tolerance]; their
// diagnoses name both sizes:
//
//	summary is 120 tokens (estimated), not shorter than its source of 100 tokens
//	summary is 130 tokens (estimated), over the target of 100 tokens by more than 20% (at most 120 allowed)
//
// A rejected summary is retried through retry.WithSteering. Steering
// amends the request in memory: the next request is the previous one plus
// the rejected summary (as the assistant's message) and a user message
// starting with [RejectedPrefix], "previous summary was rejected: ",
// followed by the diagnosis. Nothing is committed while summarizing. When
// every attempt is rejected the error is a *retry.ExhaustedError.
//
// [SummarizeAll] summarizes every group of a plan in order and stops at the
// first failure with a [*GroupError].
//
// # Counting tokens
//
// Sizes are counted with a [Tokenizer]; the default, [Estimator], counts
// one token per four characters, rounded up ([EstimateTokens]), and each
// message costs [MessageOverhead] more ([MessageTokens], [ItemsTokens]). A
// source of several messages and its one-message summary are compared the
// same way, as the context space they take.
//
// # Caveats
//
//   - Token counts are estimates unless the caller passes an exact
//     Tokenizer; label them so. The model is told the target in tokens
//     and does not know how they are counted here.
//   - A group of very short messages may have no summary shorter than it
//     (a single "ok" costs 5 estimated tokens, and every summary costs at
//     least MessageOverhead+1): such a range exhausts its attempts. Leave
//     it out of the range instead.
//   - Caller-supplied Content gets one attempt only: asking again cannot
//     change it, so a rejection is a *retry.ExhaustedError with Attempts 1.
//   - Summaries are trimmed of surrounding white space before they are
//     checked and returned.
//   - An explicitly pinned item is kept even when its kind is error or
//     note; the pin rule of PinRoles and PinFunc is not asked about those.
package compress
