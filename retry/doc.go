// Package retry makes a model's answers acceptable by checking them and
// asking again: a generic retry-with-steering loop, validators that check an
// answer and explain what is wrong with it, the spec strings that name
// validators on the command line, and pipelines whose stages send work back
// upstream.
//
// The package depends on nothing else in tract. Everything it does to a
// repository or a model goes through closures the caller passes, so it can be
// used, and tested, on its own.
//
// # The steering loop
//
// [WithSteering] runs an attempt, validates its value and, when validation
// fails, steers (tells the producer what was wrong) and tries again, up to
// [Steering.MaxAttempts] attempts in total ([DefaultMaxAttempts] when zero):
//
//	Head (once) → Attempt → Validate ─ok→ [Reset if Purify and retried] → Provenance → Result
//	                 ↑          │
//	                 └─ Steer ←─┴─failed, attempts left      failed, none left → *ExhaustedError
//
// Head takes a restore point before the first attempt; its type is a type
// parameter, so a commit hash such as dag.Hash works as is. With
// [Steering.Purify], a success that needed retries calls Reset with that
// restore point, so the failed attempts and the steering between them can
// leave the caller's history. [Result.History] and [ExhaustedError.History]
// hold the diagnoses of the failed attempts, oldest first; an empty
// diagnosis is recorded as "validation failed".
//
// An error from Attempt or Validate is not a validation failure: it stops
// the loop and is returned unchanged, so errors.Is and errors.As see the
// caller's own error (transport errors are the model client's business,
// never steering text). Exhaustion is an [*ExhaustedError]. A done context
// stops the loop before the next attempt and before any steering.
//
// # Validators
//
// A [Validator] checks one answer and, when it rejects it, says why in a
// diagnosis meant for the model that produced it. Diagnoses are
// deterministic, the same answer giving the same text, because they end up
// in hashed commits. Validators compose with [All], which runs every one and
// reports every failure, one line per validator prefixed with its name.
//
// A validator that cannot run at all is a configuration problem and is
// reported when the validator is built, as a [*SpecError], not as a
// diagnosis and not after a model has been paid for an answer: a bad regular
// expression, a schema file that is missing or not a schema, a command that
// does not exist, an "llm:" validator without a judge. A validator that
// fails while running (a judge that is down, a command that cannot start)
// returns an error, which stops the loop.
//
// # Verdicts and failure records
//
// Validate says whether an answer passed and why not. A caller that keeps
// a record of each failure (tract writes one on every failed attempt's
// commit) needs more: [Check] returns a [Verdict] for any validator, with
// the failure's [FailureType] (verification_failed by default, timeout for
// a "cmd:" command that ran out of time, rejected for an "llm:" judge's
// rejection), a one-line summary, an optional suggested fix and, for
// "cmd:", the command, its exit status and the last lines of its output.
// A validator reports these by implementing [Checker]; [CheckerFunc]
// writes one in a line. [All] combines its validators' verdicts.
//
// A verdict whose Blocked field is set says that retrying cannot fix the
// answer (the environment is broken, an input is missing): the caller
// should stop asking and escalate rather than spend attempts. A "cmd:"
// command reports it by exiting with status [BlockedExitCode] (77, the
// status test harnesses use for "skipped"). WithSteering itself knows
// nothing of verdicts: a caller's Validate closure stops the loop on a
// blocked verdict by returning an error.
//
// # Spec strings
//
// The command line names validators with spec strings, parsed in one place,
// [ParseSpec] (one) and [ParseSpecs] (several, combined with All):
//
//	json             the whole answer is JSON                       [JSON]
//	schema:PATH      valid JSON satisfying the JSON Schema at PATH  [Schema]
//	regex:RE         RE (Go syntax) matches the answer              [Regex]
//	contains:TEXT    TEXT occurs in the answer                      [Contains]
//	maxlen:N         at most N characters (not bytes)               [MaxLen]
//	minlen:N         at least N characters                          [MinLen]
//	cmd:COMMAND      sh -c COMMAND, answer on stdin, exits 0        [Command]
//	                 (exit 77: blocked, retrying cannot fix it)
//	llm:CRITERIA     a judge model finds that CRITERIA holds        [Judge]
//
// Everything after the first colon is the argument, colons included. Options
// set the directory relative schema paths and commands use ([WithBaseDir]),
// the command timeout ([WithCmdTimeout]) and the judge model
// ([WithJudge]); a [JudgeFunc] is a plain function, so this package needs no
// model client.
//
// # Pipelines
//
// For work that goes through several stages, such as draft → review →
// fact-check, a [Pipeline] (built with [NewPipeline]) lets a later stage
// reject the previous stage's output and ask for it again with a hint,
// within limits, recording an event log that can be printed as a trace.
// [ValidatorStage] turns a Validator into a stage that sends a rejected
// answer upstream with its diagnosis as the hint, and [BestOfN] picks the
// best of several tries.
//
// # Caveats
//
//   - WithSteering does not call Reset when every attempt fails: what the
//     caller's history should look like after exhaustion is the caller's
//     decision, and the restore point is the value its Head returned.
//   - Cancellation inside an attempt is the closures' business: they get
//     the context, and WithSteering returns whatever error they return.
//     WithSteering itself checks the context only between steps, and does
//     not throw away an answer that has already been accepted.
//   - "cmd:" runs a shell command on the answer, which is text a model
//     wrote. The command sees it only on standard input, never on its
//     command line, but a command that executes its input executes model
//     output. Commands run in their own process group (on Unix), which is
//     killed as a whole at the timeout. The check for a missing command
//     looks at the first word only, and skips shell builtins and words with
//     quotes, variables or other shell syntax.
//   - "cmd:" and "llm:" diagnoses are as deterministic as the command and
//     the judge model are; a command's output is cut to 2000 bytes, and a
//     timed-out command's output is whatever it printed before it was
//     killed.
//   - The "schema:" validator (github.com/google/jsonschema-go decides)
//     knows draft 2020-12, the default, and draft-07; another "$schema"
//     is a [*SpecError], as is a "$ref" to anything but a local file.
//     "format" is not checked (an annotation in 2020-12). Its diagnosis
//     lists every violation, which can be long for an answer that is far
//     off, sorted by JSON pointer (array indices numerically) and message.
//   - The "llm:" validator asks the judge with [JudgePrompt] and accepts
//     only a JSON object {"pass": …, "reason": …}, optionally in a fenced
//     code block; any other reply is a [*JudgeReplyError], not a diagnosis:
//     the answer was not judged. The judge is asked once per answer, with
//     no second request to remind it of the format: a judge call is
//     recorded nowhere (no commit, no usage), so a hidden retry would
//     spend tokens no one sees. Callers decide whether to run again.
package retry
