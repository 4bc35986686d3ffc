package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

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
	Branch    string
	Message   string
	FromStdin bool
	// PipedFirst says the text piped on standard input goes before
	// Message, a blank line between them; NoStdin (--no-stdin) says
	// standard input is not read.
	PipedFirst bool
	NoStdin    bool
	Validate   []string
	// FixJSON lets the json validator repair an answer it would reject
	// (--fix-json; see retry.FixJSON).
	FixJSON bool
	// CmdTimeout bounds one run of a "cmd:" validator (--cmd-timeout).
	CmdTimeout  time.Duration
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
	// OnExhausted answers an exhaustion (--on-exhausted: abort, skip,
	// retry or ask); Fix is the instruction of a scripted fix round
	// (--fix), and FixSet says whether it was given.
	OnExhausted string
	Fix         string
	FixSet      bool
	// Events is the file to append the turn's events to (--events).
	Events string
	// Interactive opens the REPL (--interactive).
	Interactive bool
	// Continue (-c) continues the current branch, the default; New (-n)
	// starts a new conversation on a new branch instead.
	Continue, New bool
	// RetryLast answers the branch's unanswered message again
	// (--retry-last).
	RetryLast bool
	// Resume finishes the turn of the escalation of this id (--resume).
	Resume string
	// ModelFlags are --provider, --max-tokens and --structured.
	ModelFlags ModelFlags
	// ToolFlags are --tool, --tool-schema, --approve-tools and
	// --max-tool-steps; the tools' commands are bounded by CmdTimeout.
	ToolFlags ToolFlags
}

func newCmdChat(f *Factory, runF func(*ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{Factory: f}
	var temperature float64
	var feedback, retryContext, cmdTimeout string
	cmd := &cobra.Command{
		Use:   "chat [MESSAGE | -]",
		Short: "Send a message and commit the model's (validated) answer",
		Long: `Commit MESSAGE ("-": standard input; piped text goes first) as a user message,
send the conversation to the model and commit its answer, the only thing
printed on standard output. With --validate, a rejected answer and a steering
message quoting its diagnosis are committed and the model retries, up to
--max-attempts; the branch keeps your message and the accepted answer (the
attempts: 'tract log --all'). With no MESSAGE on a terminal, or -i: the REPL.`,
		Example: `  tract chat "What is the capital of France?"
  tract chat --validate json "List three colours as a JSON array" | jq .
  tract chat -V schema:person.json --max-attempts 5 --provenance "Describe Ada"
  tract chat --tool today=date "What day of the week is it?"
  tract chat -m llama3.2 -s "You are terse." -n "Start a new conversation"
  git diff | tract chat "Review this change"`,
		Args: maxArgs(1, `one message (quote it) or "-"`),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkRetryLast(opts, args); err != nil {
				return err
			}
			if err := checkResume(opts, args); err != nil {
				return err
			}
			switch {
			case opts.RetryLast, opts.Resume != "":
			case opts.Interactive && len(args) > 0:
				return usageErrorf("--interactive reads its messages from standard input: give no MESSAGE")
			case opts.Interactive && opts.NoStdin:
				return usageErrorf("--interactive reads its messages from standard input, which --no-stdin ignores")
			case opts.Interactive:
			case len(args) == 1 && args[0] == "-" && opts.NoStdin:
				return usageErrorf(`"-" reads the message from standard input, which --no-stdin ignores: give the MESSAGE itself`)
			case len(args) == 1 && args[0] == "-":
				opts.FromStdin = true
			case len(args) == 1:
				opts.Message = args[0]
				opts.PipedFirst = f.IO.InPiped && !opts.NoStdin
			case opts.NoStdin:
				return usageErrorf("no message: give one (quote it); --no-stdin ignores standard input")
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
			opts.FixSet = cmd.Flags().Changed("fix")
			if err := checkEscalationFlags(f, opts); err != nil {
				return err
			}
			if err := checkConversationFlags(opts); err != nil {
				return err
			}
			if err := checkFixJSON(opts); err != nil {
				return err
			}
			if opts.MaxAttempts < 1 {
				return usageErrorf("--max-attempts must be at least 1, got %d", opts.MaxAttempts)
			}
			if opts.CmdTimeout, err = parseCmdTimeout(cmdTimeout); err != nil {
				return err
			}
			if err := opts.ModelFlags.check(); err != nil {
				return err
			}
			if err := opts.ToolFlags.check(f); err != nil {
				return err
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
	// Each usage fits one line of an 80-column terminal beside the
	// flags' names; what a flag does at length is in docs/validators.md
	// (its table of chat's flags) and the guides it links.
	fl := cmd.Flags()
	fl.StringArrayVarP(&opts.Validate, "validate", "V", nil, "check each answer with `SPEC` (repeatable): "+f.validators().Usages())
	fl.BoolVar(&opts.FixJSON, "fix-json", false, "let --validate json repair answers, not retry")
	addCmdTimeoutFlag(cmd, &cmdTimeout)
	// Chat's commands are its validators' and its tools': the default is
	// in the usage, to keep it on one line.
	fl.Lookup("cmd-timeout").Usage = "kill cmd: checks and tools after `DURATION` (30s)"
	fl.Lookup("cmd-timeout").DefValue = ""
	fl.IntVar(&opts.MaxAttempts, "max-attempts", retry.DefaultMaxAttempts, "make at most `N` attempts")
	fl.BoolVar(&opts.Purify, "purify", true, "keep only the accepted answer")
	fl.BoolVar(&opts.Provenance, "provenance", false, "also commit a note of how the answer was reached")
	fl.StringVar(&opts.RetryPrompt, "retry-prompt", tract.DefaultRetryPrompt, "steering `TEXT` after a failure ({diagnosis}, …)")
	// The default is two lines, quoted in docs/validators.md.
	fl.Lookup("retry-prompt").DefValue = ""
	fl.StringVarP(&opts.System, "system", "s", "", "system prompt (default $TRACT_SYSTEM or config)")
	setValueName(fl, "system", "TEXT")
	fl.StringVarP(&opts.Model, "model", "m", "", "model to ask (default $TRACT_MODEL or config)")
	setValueName(fl, "model", "NAME")
	fl.StringVarP(&opts.Model, "model-alias", "M", "", "the older short form of --model")
	_ = fl.MarkHidden("model-alias")
	fl.BoolVarP(&opts.Continue, "continue", "c", false, "continue the current branch (the default)")
	fl.BoolVarP(&opts.New, "new", "n", false, "start a new conversation on a new branch")
	fl.Float64Var(&temperature, "temperature", 0, "sampling temperature, such as 0.7")
	setValueName(fl, "temperature", "TEMP")
	fl.BoolVar(&opts.NoStream, "no-stream", false, "do not stream the answer as it arrives")
	addJSONFlag(cmd, &opts.JSON, "print the result record as JSON", "chat")
	fl.StringVar(&opts.Task, "task", "", "record task `ID` on every commit of the turn")
	fl.StringVar(&feedback, "feedback", string(retry.FeedbackPlain), "how a retry learns what failed")
	setValueName(fl, "feedback", "plain|xml")
	fl.StringVar(&retryContext, "retry-context", string(tract.ContextConversation), "what a retry sees: conversation (default), fresh")
	setValueName(fl, "retry-context", "MODE")
	fl.Lookup("retry-context").DefValue = "" // in the usage, to keep it on one line
	fl.BoolVar(&opts.Analyze, "analyze", false, "ask the model why each attempt failed")
	fl.StringVar(&opts.OnExhausted, "on-exhausted", string(tract.ResolveAbort), "abort (default), skip, retry, ask, wait or exit")
	setValueName(fl, "on-exhausted", "ACTION")
	fl.Lookup("on-exhausted").DefValue = "" // in the usage, to keep it on one line
	fl.StringVar(&opts.Fix, "fix", "", "if every attempt fails, a round guided by `TEXT`")
	fl.BoolVarP(&opts.Interactive, "interactive", "i", false, "open the interactive chat (the REPL)")
	fl.StringVar(&opts.Events, "events", "", "append the turn's events to `FILE` (JSON lines)")
	fl.BoolVar(&opts.NoStdin, "no-stdin", false, "ignore standard input, even a pipe")
	fl.BoolVar(&opts.RetryLast, "retry-last", false, "answer the message a failed turn left unanswered")
	fl.StringVar(&opts.Resume, "resume", "", "finish the turn of escalation `ID` once answered")
	addModelFlags(cmd, &opts.ModelFlags, false)
	addToolFlags(cmd, &opts.ToolFlags)
	addBranchFlag(cmd, &opts.Branch)
	return cmd
}

// chatRecord is what --json prints (see newChatRecord).
type chatRecord struct {
	*tract.ChatResult
	// FailedAttempts are the commits of the rejected attempts, in order:
	// orphans after purify, which 'tract show' and 'tract log --all' read.
	FailedAttempts []tract.Hash `json:"failed_attempts"`
	Error          string       `json:"error,omitempty"`
}

// newChatRecord is the --json record of a turn's result, and of its error
// when it failed.
func newChatRecord(res *tract.ChatResult, err error) chatRecord {
	rec := chatRecord{ChatResult: res, FailedAttempts: []tract.Hash{}}
	for _, a := range res.History {
		if !a.OK {
			rec.FailedAttempts = append(rec.FailedAttempts, a.Commit)
		}
	}
	if err != nil {
		rec.Error = err.Error()
	}
	return rec
}

func chatRun(cmd *cobra.Command, opts *ChatOptions) (retErr error) {
	f := opts.Factory
	ctx := cmd.Context()
	if f.IO.OneTurn != nil {
		f.IO.OneTurn(f.Getenv)
	}
	text, err := chatText(f, opts)
	if err != nil {
		return err
	}
	if err := resumeDefaults(cmd, opts); err != nil {
		return err
	}
	f.wait = newWaitLine(f) // "waiting for MODEL… 3.2s" on a terminal
	client, err := newClient(f, opts.Model, opts.ModelFlags)
	if err != nil {
		return err
	}
	if opts.System, err = f.setting("system", opts.System); err != nil {
		return err
	}
	validator, err := parseValidators(f, opts.Validate, opts.CmdTimeout, withoutWaitLine(client), opts.Model, opts.specOptions()...)
	if err != nil {
		return err
	}
	schema, err := opts.ModelFlags.schema(f, opts.Validate)
	if err != nil {
		return err
	}
	copts := []tract.ChatOption{
		tract.UseClient(client),
		tract.DeferStart(), // a wrong setup writes nothing (the REPL's /retry needs the message and error)
		tract.MaxAttempts(opts.MaxAttempts),
		tract.Purify(opts.Purify),
		tract.RetryPrompt(opts.RetryPrompt),
		tract.Model(opts.Model),
		tract.OnAttempt(progress(f.IO.ErrOut, f.IO.ErrTTY, len(opts.Validate) > 0)),
	}
	if validator != nil {
		copts = append(copts, tract.Validate(validator), tract.Structured(schema))
	}
	// Each tool's run is shown on standard error, as the attempts are.
	run := &toolRun{terminal: f.IO.ErrTTY, width: func() int { return errWidth(f) }}
	if !f.Quiet {
		run.show = newScreenWriter(f.IO.ErrOut, f.IO.ErrTTY)
	}
	if opts.ToolFlags.Approve {
		run.ask = promptApproval(bufio.NewReader(f.IO.In), f.IO.ErrOut)
	}
	tools, err := buildTools(f, &opts.ToolFlags, opts.CmdTimeout, run)
	if err != nil {
		return err
	}
	if len(tools) > 0 {
		copts = append(copts, tract.Tools(tools...), tract.MaxToolSteps(opts.ToolFlags.MaxSteps))
	}
	if opts.TaskSet {
		copts = append(copts, tract.Task(opts.Task))
	}
	copts = append(copts, tract.Feedback(opts.Feedback), tract.RetryContextStrategy(opts.RetryContext))
	if opts.Analyze {
		copts = append(copts, tract.Analyze(tract.ModelAnalyzer(withoutWaitLine(client), opts.Model)))
	}
	esc, err := escalationOption(f, opts)
	if err != nil {
		return err
	}
	copts = append(copts, esc)
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
	var attempts *attemptStream
	if len(opts.Validate) > 0 && f.IO.ErrTTY && !opts.NoStream {
		attempts = newAttemptStream(f, f.IO.ErrOut, f.IO.OutTTY && !opts.JSON)
		copts = append(copts, attempts.options()...)
	}
	// The answer, streamed or not, reaches a terminal through the screen
	// sanitiser; piped, it keeps its bytes.
	out := newScreenWriter(f.IO.Out, f.IO.OutTTY)
	if streaming {
		// midLine: the stream left a line unfinished, which a tool's line
		// (on standard error, the same terminal) must not continue.
		var midLine atomic.Bool
		copts = append(copts, tract.OnDelta(func(d string) {
			io.WriteString(out, d)
			flush(out)
			if d != "" {
				midLine.Store(!strings.HasSuffix(d, "\n"))
			}
		}))
		run.before = func() {
			if midLine.Swap(false) {
				fmt.Fprintln(out)
				flush(out)
			}
		}
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
		var conversation string
		if opts.New {
			var err error
			if conversation, err = conversationName(ctx, f, t); err != nil {
				return err
			}
			copts = append(copts, tract.NewConversation(conversation))
		}
		res, err := runTurn(ctx, f, t, opts, text, copts)
		if attempts != nil {
			attempts.end()
		}
		if conversation != "" && res != nil && !res.User.IsZero() {
			sayNewConversation(f, conversation)
		}
		if unsent := (*tract.UnsentError)(nil); errors.As(err, &unsent) {
			err = &hintedError{err: err, hint: unsentHint(err, client.Provider(), cmp.Or(opts.Model, client.DefaultModel()))}
		}
		if res != nil {
			err = failedTurn(ctx, t, opts, res.User, err)
		}
		if opts.JSON && res != nil {
			if werr := writeJSON(f.IO.Out, newChatRecord(res, err)); werr != nil {
				return werr
			}
		}
		if err != nil {
			return err
		}
		switch {
		case opts.JSON:
		case streaming:
			fmt.Fprintln(out)
			printToolCalls(out, res) // not streamed as text
		default:
			fmt.Fprintln(out, res.Text)
		}
		flush(out) // the answer before the outcome, on a terminal showing both
		reportOutcome(f.IO.ErrOut, res)
		return nil
	})
}

// chatText is the message a one-shot chat sends: MESSAGE; or standard
// input, with "-" or with no MESSAGE off a terminal; or, when text is
// piped in with MESSAGE, the piped text, a blank line and MESSAGE (the
// order of llm). Piped text that is empty or only white space adds
// nothing; standard input that is the whole message must hold some.
// --retry-last sends no new text.
func chatText(f *Factory, opts *ChatOptions) (string, error) {
	switch {
	case opts.RetryLast, opts.Resume != "":
		return "", nil
	case opts.FromStdin:
		text, err := readText(f, "-", true)
		if err == nil && strings.TrimSpace(text) == "" {
			err = usageErrorf("no message: standard input is empty; give a MESSAGE or pipe one in")
		}
		return text, err
	case opts.PipedFirst:
		piped, err := readText(f, "-", true)
		if err != nil {
			return "", err
		}
		if piped = strings.TrimRight(piped, "\r\n"); strings.TrimSpace(piped) == "" {
			return opts.Message, nil
		}
		return piped + "\n\n" + opts.Message, nil
	}
	return opts.Message, nil
}

// parseValidators parses --validate specs the one way chat and compress
// share, with the Factory's parser: paths relative to the working
// directory, "cmd:" commands bounded by cmdTimeout (--cmd-timeout; 0:
// retry's default), "llm:" judged by client (nil: no judge, so "llm:" is
// a configuration error), and with the options more. No specs give a nil
// validator; a bad spec is a usage error.
func parseValidators(f *Factory, specs []string, cmdTimeout time.Duration, client llm.Client, model string, more ...retry.SpecOption) (retry.Validator, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	wd, err := f.Getwd()
	if err != nil {
		return nil, err
	}
	sopts := []retry.SpecOption{retry.WithBaseDir(wd)}
	if cmdTimeout > 0 {
		sopts = append(sopts, retry.WithCmdTimeout(cmdTimeout))
	}
	if client != nil {
		sopts = append(sopts, retry.WithJudge(tract.Judge(client, model)))
	}
	sopts = append(sopts, more...)
	v, err := f.validators().ParseAll(specs, sopts...)
	if err != nil {
		return nil, &usageError{err}
	}
	return v, nil
}

// checkFixJSON refuses --fix-json without the json validator it lets
// repair answers.
func checkFixJSON(opts *ChatOptions) error {
	if opts.FixJSON && !slices.Contains(opts.Validate, "json") {
		return usageErrorf("--fix-json lets the json validator repair an answer: add --validate json " +
			"(before any validator that should judge the repaired answer, such as schema:PATH)")
	}
	return nil
}

// specOptions are the options of the validators chat parses that its
// flags give (--fix-json).
func (opts *ChatOptions) specOptions() []retry.SpecOption {
	if opts.FixJSON {
		return []retry.SpecOption{retry.WithFixJSON()}
	}
	return nil
}

// progress prints each validated attempt to stderr; on a terminal
// (terminal is true), its diagnosis through the screen sanitiser.
func progress(w io.Writer, terminal, validated bool) func(tract.Attempt) {
	return func(a tract.Attempt) {
		if !validated {
			return
		}
		if a.OK && a.FixedBy != "" {
			fmt.Fprintf(w, "attempt %d/%d: fixed by %s\n", a.Number, a.Max, a.FixedBy)
			return
		}
		if a.OK {
			fmt.Fprintf(w, "attempt %d/%d: passed\n", a.Number, a.Max)
			return
		}
		d := a.Diagnosis
		if terminal {
			d = screenText(d)
		}
		fmt.Fprintf(w, "attempt %d/%d: failed: %s\n", a.Number, a.Max, indent(d, "  ")[2:])
	}
}

func reportOutcome(w io.Writer, res *tract.ChatResult) {
	if res.FixedBy != "" {
		fmt.Fprintf(w, "fixed by %s; the answer as given is %s, off the branch (see 'tract log --all')\n", res.FixedBy, res.Original.Short())
	}
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
