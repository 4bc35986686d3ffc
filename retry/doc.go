// Package retry makes a model's answers acceptable by checking them and
// asking again: a generic retry-with-steering loop, validators that check an
// answer and explain what is wrong with it, the spec strings that name
// validators on the command line, and pipelines whose stages send work back
// upstream. It depends on nothing else in tract: it reaches a repository or
// a model only through closures the caller passes.
//
// [WithSteering] runs an attempt, validates it and, when validation fails,
// steers (tells the producer what was wrong) and tries again, up to
// [Steering.MaxAttempts]; with [Steering.Purify] a success after retries
// resets the caller's history to the restore point. An error from a closure
// stops the loop unchanged; exhaustion is an [*ExhaustedError].
//
// A [Validator] checks one answer and, when it rejects it, says why in a
// deterministic diagnosis meant for the model. [All] combines validators;
// [Check] returns a [Verdict] (failure type, suggested fix, blocked) for
// any of them. A validator that cannot run (a bad regular expression, a
// missing schema file or command) is a [*SpecError] when it is built,
// before any model call.
//
// A validator may fix an answer instead: its verdict passes with
// [Verdict.Fixed], which later validators judge ([FixFunc], [FixJSON]).
//
// # Spec strings
//
// [ParseSpec] and [ParseSpecs] build validators from spec strings such as
// "json" or "maxlen:200": a kind, then a colon and the argument (which may
// hold colons) for kinds that take one. The built-in kinds ([Kinds]):
//
//	json           the whole answer is JSON
//	schema:PATH    valid JSON satisfying the JSON Schema at PATH
//	regex:RE       RE (Go syntax) matches the answer
//	contains:TEXT  TEXT occurs in the answer
//	maxlen:N       at most N characters (not bytes)
//	minlen:N       at least N characters
//	cmd:COMMAND    sh -c COMMAND, answer on stdin, exits 0 (77: blocked)
//	llm:CRITERIA   a judge model finds that CRITERIA holds
//
// A program adds kinds of its own with a [Kind] and
// NewSpecParser(append(Kinds(), mine)...); help, completion and errors are
// generated from a parser's kinds. [WithBaseDir], [WithCmdTimeout],
// [WithJudge] and [WithFixJSON] configure the validators built.
//
// # Pipelines
//
// A [Pipeline] ([NewPipeline]) runs stages such as draft → review, where a
// later stage may send work back upstream with a hint, within limits, and
// records an event log that prints as a trace. [ValidatorStage] turns a
// Validator into a stage; [BestOfN] keeps the best of several tries.
//
// # Caveats
//
// "cmd:" runs a shell command on text a model wrote (on its standard
// input only). "cmd:" and "llm:" diagnoses are as deterministic as the
// command and the judge are. The judge is asked once per answer; a reply
// that is not its JSON verdict is a [*JudgeReplyError], not a diagnosis.
//
// The full contracts (the loop's cases, verdicts, blocked answers, adding a
// kind, every caveat) are in docs/retry.md in the repository.
package retry
