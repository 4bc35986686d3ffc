package main

import (
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/spf13/cobra"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// ChatOptions are the inputs of 'tract chat'.
type ChatOptions struct {
	Factory *Factory
	// Branch, when set, is the branch to act on instead of HEAD's.
	Branch      string
	Message     string
	FromStdin   bool
	Validate    []string
	MaxAttempts int
	Purify      bool
	Provenance  bool
	RetryPrompt string
	System      string
	Model       string
	Temperature *float64
	NoStream    bool
	JSON        bool
	// Task is the task id (--task); TaskSet says --task was given.
	Task    string
	TaskSet bool
	// Feedback, RetryContext and Analyze are --feedback, --retry-context
	// and --analyze.
	Feedback     retry.FeedbackFormat
	RetryContext tract.ContextStrategy
	Analyze      bool
	// OnExhausted answers an exhaustion (--on-exhausted); Fix is the
	// instruction of a scripted fix round (--fix); the Set fields say
	// whether each was given.
	OnExhausted    string
	OnExhaustedSet bool
	Fix            string
	FixSet         bool
	// Events is the file to append the turn's events to (--events).
	Events string
	// Interactive opens the REPL (--interactive).
	Interactive bool
}

func newCmdChat(f *Factory, runF func(*ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{Factory: f}
	var temperature float64
	var feedback, retryContext string
	cmd := &cobra.Command{
		Use:   "chat [MESSAGE | -]",
		Short: "Send a message and commit the model's (validated) answer",
		Long: `Commit MESSAGE (or standard input with "-") as a user message, send the
compiled context to the model and commit its answer.

With --validate, every answer is checked; a rejected answer and a steering
message that quotes the diagnosis are committed and the model tries again, up
to --max-attempts in total. After a success the branch is purified: it is reset
to the user message and only the accepted answer is re-committed, so the next
turn's context stays clean while the failed attempts remain in 'tract log --all'.

Standard output carries only the accepted answer, so 'tract chat ... | jq .'
works; attempts, diagnoses and the outcome go to standard error.

Each failed attempt records a failure record (its type: execution_error,
verification_failed, timeout or rejected; a one-line error; the details; for
cmd: the command, exit code and last lines of output), which 'tract show'
prints. --task ID records a task id on every commit of the turn; --events FILE
appends the turn's events (see 'tract events') to FILE as they happen. A failure
that retrying cannot fix ends the turn at once: the model server refusing the
key (401, 403), the request (400) or its length, or a cmd: validator exiting
with status 77 (blocked).

--feedback xml replaces the steering text by a <retry_context> block that
lists every earlier failure of the turn and invites the model to answer
"BLOCKED: reason" when the task cannot be done, which ends the turn at once
(exit 7). --retry-context fresh starts each retry from the user message again,
with the feedback placed before it instead of the failed answers. --analyze
asks the model, in one extra call per failure, for the root cause and a fix;
they are recorded in the failure record and, with xml, sent to later attempts.

When every attempt failed (or a failure retrying cannot fix stopped the
turn) and standard input and standard error are terminals, the escalation is
printed (task, attempts, a table of the failures, the last error's details)
and you answer: retry (a fresh round of --max-attempts attempts), skip (a
skip note is committed after the error commit), abort, or fix: INSTRUCTION
(one more round whose steering starts with INSTRUCTION, marked as your
intervention). A turn runs at most 5 rounds. Without a terminal, or when
either flag is given, --on-exhausted abort|skip|retry answers (default
abort) and --fix TEXT answers the first exhaustion with fix: TEXT; both
answer only exhaustion: a failure retrying cannot fix is aborted (exit 7).
--fix needs --validate.

Validators (repeatable; all must pass):
  json                 the whole answer parses as JSON
  schema:PATH          valid JSON that satisfies the JSON Schema at PATH
  regex:RE             the Go regular expression RE matches
  contains:TEXT        TEXT occurs in the answer
  maxlen:N, minlen:N   length in characters within the bound
  cmd:COMMAND          COMMAND (run by sh -c, answer on stdin) exits 0;
                       exit 77 means blocked: retrying cannot fix it
  llm:CRITERIA         a judge model answers that CRITERIA holds

The model is configured by OPENAI_API_KEY, OPENAI_BASE_URL (any OpenAI-compatible
server: Ollama, vLLM, llama.cpp) and TRACT_MODEL or --model.

Exit codes: 0 accepted, 2 usage or configuration error (a bad --task ID,
--on-exhausted or --fix too), 3 validation failed on every attempt (and the
escalation was aborted), 4 model or transport error, or an llm: judge's reply that is not
its JSON verdict (the answer stays on the branch, unjudged), 5 conflict:
another writer moved the branch while the model answered (the answer is kept
off the branch and named), 6 skipped (the escalation was answered skip), 7 a
failure retrying cannot fix: the server refused the key (401, 403), the
request (400) or its length, or a validator (or, with --feedback xml, the
model) reported the answer blocked,
130 interrupted.

The repository is locked only while a commit is written, never while the model
answers: 'tract log --all' in another terminal shows the turn as it happens.

INTERACTIVE CHAT

With no MESSAGE on a terminal, or with --interactive, chat reads lines from
standard input: each line is a message (a validated turn as above; end a
line with \ to continue the message on the next) or a command. On a terminal
the prompt shows the mode, lines can be edited and recalled (Up/Down; in
memory only, never a secret line), a multi-line paste is one message,
Ctrl-C cancels a streamed answer (nothing of its turn stays on the branch)
or clears the line, and Ctrl-D leaves. With standard input not a terminal
there are no prompts and no colour, so a script can drive it:

  printf 'hello\n/retry\nhello again\n/apply\n' | tract chat --interactive

  /retry            replace the last interaction (message and answer, message
                    and error, or a lone error): each message is then an
                    attempt, kept as a side chain off the commit before it
  /apply [last|ID]  point the branch at an attempt, in one compare-and-swap move
  /cancel           leave retry mode; the attempts stay in 'tract log --all'
  /secret [on|off]  continue off the record: nothing is written anywhere
  /rewind [last|ID] move the branch back before an interaction, after "yes"
                    (nothing is deleted; the reply says how to undo it)
  /log [N], /show ID, /status, /model [NAME], /system [TEXT], /help, /exit

A failed model call is committed as the message and an error commit; a
failure before the send (no model configured) as a lone error commit. While
the branch ends in an error, messages are refused until /retry or /rewind.
Each failing line prints "error: ..." on standard error and the REPL goes
on; it exits 0 at the end of input or /exit.`,
		Example: `  tract chat "What is the capital of France?"
  tract chat --validate json "List three colours as a JSON array" | jq .
  tract chat --validate schema:person.json --max-attempts 5 --provenance "Describe Ada"
  echo "Summarise this" | tract chat -`,
		Args: maxArgs(1, `one message (quote it) or "-"`),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.Interactive && len(args) > 0:
				return usageErrorf("--interactive reads its messages from standard input: give no MESSAGE")
			case opts.Interactive:
			case len(args) == 1 && args[0] == "-":
				opts.FromStdin = true
			case len(args) == 1:
				opts.Message = args[0]
			case !f.IO.InTTY:
				opts.FromStdin = true
			default:
				opts.Interactive = true // no message, on a terminal: the REPL
			}
			if cmd.Flags().Changed("temperature") {
				if math.IsNaN(temperature) || math.IsInf(temperature, 0) || temperature < 0 {
					return usageErrorf("--temperature %v: give a number of 0 or more, such as 0.7", temperature)
				}
				opts.Temperature = &temperature
			}
			opts.TaskSet = cmd.Flags().Changed("task")
			var err error
			if opts.Feedback, err = retry.ParseFeedbackFormat(feedback); err != nil {
				return usageErrorf("--feedback: %v", err)
			}
			if opts.RetryContext, err = tract.ParseContextStrategy(retryContext); err != nil {
				return usageErrorf("--retry-context: %v", err)
			}
			opts.OnExhaustedSet, opts.FixSet = cmd.Flags().Changed("on-exhausted"), cmd.Flags().Changed("fix")
			if err := checkEscalationFlags(opts); err != nil {
				return err
			}
			if opts.MaxAttempts < 1 {
				return usageErrorf("--max-attempts must be at least 1, got %d", opts.MaxAttempts)
			}
			if runF != nil {
				return runF(opts)
			}
			if opts.Interactive {
				return replRun(cmd, opts)
			}
			return chatRun(cmd, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Validate, "validate", "V", nil, "validator spec (repeatable): json, schema:PATH, regex:RE, contains:TEXT, maxlen:N, minlen:N, cmd:COMMAND, llm:CRITERIA")
	fl.IntVar(&opts.MaxAttempts, "max-attempts", retry.DefaultMaxAttempts, "total attempts, the first included")
	fl.BoolVar(&opts.Purify, "purify", true, "after retries keep only the accepted answer on the branch (--purify=false keeps every attempt)")
	fl.BoolVar(&opts.Provenance, "provenance", false, "also commit a note recording how the answer was reached")
	fl.StringVar(&opts.RetryPrompt, "retry-prompt", tract.DefaultRetryPrompt, "steering text; may use {diagnosis}, {attempt}, {max_attempts}")
	fl.StringVar(&opts.System, "system", "", "system prompt, committed first unless the context already has it")
	fl.StringVarP(&opts.Model, "model", "M", "", "model name (default $TRACT_MODEL)")
	fl.Float64Var(&temperature, "temperature", 0, "sampling temperature")
	fl.BoolVar(&opts.NoStream, "no-stream", false, "do not stream the answer to the terminal as it arrives")
	fl.BoolVar(&opts.JSON, "json", false, "print the result record (answer, commit, attempts, diagnoses, usage) as JSON")
	fl.StringVar(&opts.Task, "task", "", "task `ID` recorded on every commit of the turn (one line, at most 200 bytes)")
	fl.StringVar(&feedback, "feedback", string(retry.FeedbackPlain), "how a retry is told what failed: plain (the --retry-prompt text) or xml (every failure so far)")
	fl.StringVar(&retryContext, "retry-context", string(tract.ContextConversation), "what a retry sees: conversation (the failed answers and feedback) or fresh (the feedback before the message, no failed answers)")
	fl.BoolVar(&opts.Analyze, "analyze", false, "ask the model, in one extra call per failure, for its root cause and a fix")
	fl.StringVar(&opts.OnExhausted, "on-exhausted", string(tract.ResolveAbort), "when every attempt failed and no one is at a terminal: abort, skip or retry (a fresh round)")
	fl.StringVar(&opts.Fix, "fix", "", "when every attempt failed, run one more round with `TEXT` as the model's first guidance (needs --validate)")
	fl.BoolVarP(&opts.Interactive, "interactive", "i", false, "open the REPL: read messages and /commands line by line from standard input (see INTERACTIVE CHAT)")
	fl.StringVar(&opts.Events, "events", "", "append the turn's events to `FILE` as JSON lines as they happen (see 'tract events')")
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}

// chatRecord is what --json prints.
type chatRecord struct {
	*tract.ChatResult
	Error string `json:"error,omitempty"`
}

func chatRun(cmd *cobra.Command, opts *ChatOptions) (retErr error) {
	f := opts.Factory
	ctx := cmd.Context()
	text := opts.Message
	if opts.FromStdin {
		var err error
		if text, err = readText(f, "-", true); err != nil {
			return err
		}
	}
	client, err := newClient(f, opts.Model)
	if err != nil {
		return err
	}
	validator, err := parseValidators(f, opts.Validate, client, opts.Model)
	if err != nil {
		return err
	}
	copts := []tract.ChatOption{
		tract.UseClient(client),
		tract.MaxAttempts(opts.MaxAttempts),
		tract.Purify(opts.Purify),
		tract.RetryPrompt(opts.RetryPrompt),
		tract.Model(opts.Model),
		tract.OnAttempt(progress(f.IO.ErrOut, len(opts.Validate) > 0)),
	}
	if validator != nil {
		copts = append(copts, tract.Validate(validator))
	}
	if opts.TaskSet {
		copts = append(copts, tract.Task(opts.Task))
	}
	copts = append(copts, tract.Feedback(opts.Feedback), tract.RetryContextStrategy(opts.RetryContext))
	if opts.Analyze {
		copts = append(copts, tract.Analyze(tract.ModelAnalyzer(client, opts.Model)))
	}
	if hook := escalationHook(f, opts); hook != nil {
		copts = append(copts, tract.OnEscalation(hook))
	}
	if opts.Provenance {
		copts = append(copts, tract.ProvenanceNote())
	}
	if opts.System != "" {
		copts = append(copts, tract.SystemPrompt(opts.System))
	}
	if opts.Temperature != nil {
		copts = append(copts, tract.Temperature(*opts.Temperature))
	}
	streaming := len(opts.Validate) == 0 && f.IO.OutTTY && !opts.NoStream && !opts.JSON
	if streaming {
		copts = append(copts, tract.OnDelta(func(d string) {
			io.WriteString(f.IO.Out, d)
			flush(f.IO.Out)
		}))
	}
	if opts.Events != "" {
		log, err := openEventLog(opts.Events)
		if err != nil {
			return err
		}
		defer func() { retErr = errors.Join(retErr, log.close()) }()
		copts = append(copts, tract.OnEvent(log.write))
	}
	return withTractOn(f, opts.Branch, func(t *tract.Tract) error {
		res, err := t.Chat(ctx, text, copts...)
		if opts.JSON && res != nil {
			rec := chatRecord{ChatResult: res}
			if err != nil {
				rec.Error = err.Error()
			}
			if werr := writeJSON(f.IO.Out, rec); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
		switch {
		case opts.JSON:
		case streaming:
			fmt.Fprintln(f.IO.Out)
			printToolCalls(f.IO.Out, res) // not streamed as text
		default:
			fmt.Fprintln(f.IO.Out, res.Text)
		}
		reportOutcome(f.IO.ErrOut, res)
		return nil
	})
}

// newClient builds the model client from the environment and flags.
func newClient(f *Factory, model string) (*llm.OpenAI, error) {
	c, err := llm.NewOpenAIFromEnv(f.Getenv, llm.WithModel(model), llm.WithOnRetry(func(ev llm.RetryEvent) {
		fmt.Fprintf(f.IO.ErrOut, "model: %v; retrying in %s\n", ev.Err, ev.Wait.Round(1e6))
	}))
	var ce *llm.ConfigError
	if errors.As(err, &ce) {
		return nil, &usageError{err}
	}
	return c, err
}

// parseValidators parses --validate specs the one way chat and compress
// share: paths relative to the working directory, "llm:" judged by client
// (nil: no judge, so "llm:" is a configuration error). No specs give a nil
// validator; a bad spec is a usage error.
func parseValidators(f *Factory, specs []string, client llm.Client, model string) (retry.Validator, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	wd, err := f.Getwd()
	if err != nil {
		return nil, err
	}
	sopts := []retry.SpecOption{retry.WithBaseDir(wd)}
	if client != nil {
		sopts = append(sopts, retry.WithJudge(tract.Judge(client, model)))
	}
	v, err := retry.ParseSpecs(specs, sopts...)
	if err != nil {
		return nil, &usageError{err}
	}
	return v, nil
}

// progress prints each validated attempt to stderr.
func progress(w io.Writer, validated bool) func(tract.Attempt) {
	return func(a tract.Attempt) {
		if !validated {
			return
		}
		if a.OK {
			fmt.Fprintf(w, "attempt %d/%d: passed\n", a.Number, a.Max)
			return
		}
		fmt.Fprintf(w, "attempt %d/%d: failed: %s\n", a.Number, a.Max, indent(a.Diagnosis, "  ")[2:])
	}
}

func reportOutcome(w io.Writer, res *tract.ChatResult) {
	if res.Attempts <= 1 {
		return
	}
	if res.Purified {
		fmt.Fprintf(w, "accepted after %d attempts; purified %s off the branch (see 'tract log --all')\n",
			res.Attempts, english.Count(res.Attempts-1, "failed attempt", "failed attempts"))
		return
	}
	fmt.Fprintf(w, "accepted after %d attempts\n", res.Attempts)
}
