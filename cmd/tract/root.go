package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/compress"
	"github.com/tractdag/tract/docs"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/repl"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store/postgres"
)

// run executes the CLI and returns the process exit code. Standard output
// is buffered for the whole command (a log of 100,000 commits is one write
// per 64 KiB, not one per line) and flushed before run returns; output
// that must appear at once, such as a streamed answer, calls flush.
func run(ctx context.Context, args []string, io *IOStreams, getenv func(string) string) int {
	out := bufio.NewWriterSize(io.Out, 64<<10)
	io.Out = out
	f := newFactory(io, getenv)
	root := newRootCmdFor(f, args)
	root.SetArgs(expandCountShorthand(root, args))
	cmd, err := root.ExecuteContextC(ctx)
	if ferr := out.Flush(); err == nil && ferr != nil && !isBrokenPipe(ferr) {
		err = fmt.Errorf("write standard output: %w", ferr)
	}
	if err == nil {
		return exitOK
	}
	return printError(f, cmd, err)
}

// flush writes out what w buffers, when it buffers.
func flush(w io.Writer) {
	if f, ok := w.(interface{ Flush() error }); ok {
		_ = f.Flush()
	}
}

// isBrokenPipe reports a reader that went away ('tract log | head'): not an
// error of the command.
func isBrokenPipe(err error) bool { return errors.Is(err, syscall.EPIPE) }

// printError is the one place errors reach the user; it returns the code.
func printError(f *Factory, cmd *cobra.Command, err error) int {
	if errors.Is(err, errPagedInterrupt) {
		return exitInterrupt
	}
	code := exitCode(err)
	if code == exitInterrupt && errors.Is(err, postgres.ErrCommitUnknown) {
		fmt.Fprintln(f.IO.ErrOut, "tract: interrupted while the database committed: the last commit may or may not have been written;\n"+
			"look with 'tract log' before running the command again")
		return code
	}
	if code == exitInterrupt {
		fmt.Fprintln(f.IO.ErrOut, "tract: interrupted; every commit made so far is intact (see 'tract log')")
		if r := recovery(err); r != "" {
			fmt.Fprintln(f.IO.ErrOut, r)
		}
		return code
	}
	// An error may quote a server's message or a validator's output: on
	// a terminal, through the screen sanitiser.
	shown := func(s string) string { return s }
	if f.IO.ErrTTY {
		shown = screenText
	}
	fmt.Fprintf(f.IO.ErrOut, "tract: %s\n", shown(err.Error()))
	if hint := hintOn(f, err); hint != "" {
		fmt.Fprintln(f.IO.ErrOut, shown(hint))
	}
	if r := recovery(err); r != "" {
		fmt.Fprintln(f.IO.ErrOut, r)
	}
	var env *envError
	if code == exitUsage && cmd != nil && (isUsage(err) || !isBadInput(err)) && !errors.As(err, &env) {
		fmt.Fprintf(f.IO.ErrOut, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return code
}

// errorHint says what the user can do about errors that have a remedy on
// the command line.
func errorHint(err error) string {
	var (
		locked    *tract.LockedError
		conflict  *tract.ConflictError
		readOnly  *tract.ReadOnlyError
		create    *tract.CreateError
		erasure   *tract.ErasureError
		cfgErr    *llm.ConfigError
		judgeErr  *retry.JudgeReplyError
		tooLarge  *tract.TooLargeError
		escalated *tract.EscalationError
		exhausted *retry.ExhaustedError
		server    *postgres.ServerError
		reflogPos *tract.ReflogPositionError
		hinted    *hintedError
		failed    *failedTurnError
		rejected  *summaryRejectedError
		timedOut  *llm.TimeoutError
		toolSteps *tract.ToolStepsError
	)
	var env *envError
	switch {
	case errors.As(err, &hinted):
		return hinted.hint
	case errors.Is(err, tract.ErrWaiting):
		return waitingHint(err)
	case errors.Is(err, tract.ErrAnswered):
		return "One answer wins: the first one given. 'tract escalations' lists those that still wait."
	case errors.As(err, new(*tract.EscalationTakenUpError)):
		return "'tract log' shows how the turn went on; 'tract escalations' lists those that still wait."
	case errors.Is(err, tract.ErrEscalationNotFound), errors.Is(err, tract.ErrBadEscalationID):
		return "'tract escalations' lists the escalations that wait, with their ids."
	case errors.As(err, &timedOut):
		return timeoutHint(timedOut)
	case errors.As(err, &env):
		return env.hint()
	case errors.Is(err, tract.ErrNoTurn):
		return "--retry-last sends again your last message when its turn failed and left it without an answer.\n" +
			"To ask something new, send a message: tract chat MESSAGE ('tract log' shows how the branch ends)."
	case errors.As(err, &toolSteps):
		return fmt.Sprintf("The model kept calling tools: give it more steps with --max-tool-steps N (it had %d), or ask for\n"+
			"less. 'tract log --all' shows the tool steps it made.", toolSteps.Limit)
	case errors.Is(err, tract.ErrSkipped):
		return "The task was skipped: 'tract show' prints the skip note, 'tract log --all' the attempts."
	case errors.As(err, &rejected):
		return rejected.hint()
	case errors.As(err, &exhausted) && errors.As(err, &failed):
		return "'tract log --all' shows the attempts and 'tract show' their failure records. Sending the message\n" +
			"again (below) takes --on-exhausted retry to give the model another round when the attempts fail,\n" +
			"or --fix TEXT to give it guidance then."
	case errors.As(err, &exhausted):
		return "'tract log --all' shows the attempts and 'tract show' their failure records."
	case errors.As(err, &escalated) && escalated.Reason == tract.EscalateBlocked:
		return "A validator (a cmd: validator exits with 77 for this), or the model answering BLOCKED: under --feedback xml,\n" +
			"reported that retrying cannot fix the answer.\n" +
			"'tract log --all' shows the attempt and 'tract show' its failure record; fix the cause, then run the command again."
	case errors.As(err, &tooLarge):
		return tooLargeHint(tooLarge)
	case errors.As(err, &locked):
		return "Another tract command (or program) is using the repository. Wait for it to finish, or wait longer\n" +
			"with --lock-timeout DURATION or TRACT_LOCK_TIMEOUT (for example --lock-timeout 1m)."
	case errors.As(err, &conflict) && !conflict.Kept.IsZero():
		k := conflict.Kept.Short()
		return fmt.Sprintf("Nothing was lost: the %s is commit %s (see 'tract show %s'; 'tract log --all' lists it).\n"+
			"To use it, keep both lines of work with 'tract branch NAME %s', or put the branch\n"+
			"on it with 'tract reset --soft %s' (the other writer's commits then leave the branch).",
			conflict.What, k, k, k, k)
	case errors.As(err, &conflict):
		return "Nothing was written. Look at what changed ('tract log'), then run the command again."
	case errors.As(err, &create):
		return fmt.Sprintf("Choose a path in a directory you can write to (--db PATH or TRACT_DB), or get write\n"+
			"permission on %s.", create.Dir)
	case errors.As(err, &readOnly):
		return "Commands that only read (log, show, status, log --all, compile, fsck) work on this file."
	case errors.As(err, &erasure):
		return "What was deleted is gone from the history; run any tract command once the cause is fixed (a full disk,\n" +
			"say) and it finishes wiping the old bytes before anything else."
	case errors.Is(err, tract.ErrDamaged):
		return "Run 'tract fsck --salvage NEW.db' to copy what is intact into a new repository and use that one,\n" +
			"or restore a backup over the file and run 'tract fsck' to check it clean."
	case errors.Is(err, tract.ErrCorrupt):
		return "The file is damaged: 'tract fsck' reports what is lost, and 'tract fsck --salvage NEW.db' copies\n" +
			"what is intact into a new repository. Or restore a backup."
	case errors.Is(err, postgres.ErrSchemaMissing), errors.Is(err, postgres.ErrSchemaOld):
		return "Create or upgrade the database's schema with 'tract migrate' (with the same --db or TRACT_DB),\n" +
			"then run the command again."
	case errors.As(err, &server):
		return serverHint(err)
	case postgres.IsConnectError(err):
		return "Check the database URL's host, port, user and password (or PGPASSWORD, ~/.pgpass), and that the\n" +
			"server is running and accepts connections from this machine."
	case errors.Is(err, errors.ErrUnsupported):
		return "This works on repository files only: a PostgreSQL database gives space back itself (VACUUM)\n" +
			"and has no file to salvage; 'tract fsck' checks a repository there."
	case errors.Is(err, tract.ErrNoDriver):
		return "A repository is a file path or a postgres:// (postgresql://) URL."
	case errors.Is(err, tract.ErrNotRepository):
		return "Create a repository with 'tract init', or name one with --db PATH or TRACT_DB."
	case errors.Is(err, tract.ErrBranchExists):
		return "Choose another name, or delete the branch first with 'tract branch -d NAME'."
	case errors.Is(err, tract.ErrBranchNotFound):
		return "List the branches with 'tract branch'; make one with 'tract branch NAME' or 'tract switch -c NAME'."
	case errors.Is(err, tract.ErrDetachedHead):
		return "Create a branch to work on here with 'tract switch -c NAME'."
	case errors.Is(err, tract.ErrCurrentBranch):
		return "Switch HEAD to another branch first ('tract switch OTHER'; 'tract branch' lists them), then delete it."
	case errors.Is(err, tract.ErrUnknownRevision):
		return "See 'tract log --all' for commits and 'tract branch' for branches."
	case errors.As(err, &reflogPos):
		return fmt.Sprintf("'tract reflog %s' lists the moves of %s, newest first, as %s@{0}, %s@{1}, …",
			shellQuote(reflogPos.Ref), reflogPos.Ref, reflogPos.Ref, reflogPos.Ref)
	case errors.Is(err, tract.ErrReversedRange):
		return "Swap --from and --to."
	case errors.Is(err, tract.ErrSummaryCount):
		return "Give one --content per group to summarize: 'tract compress --dry-run' with the same range shows the groups."
	case errors.As(err, &cfgErr) && missesSetting(err, "model"):
		return "Pass --model NAME (-m NAME), set TRACT_MODEL, or set a default with 'tract config set model NAME'."
	case errors.Is(err, retry.ErrNoJudge):
		return "An llm: validator asks a judge model: configure one with --model NAME (-m NAME), TRACT_MODEL or\n" +
			"'tract config set model NAME', and OPENAI_API_KEY (or OPENAI_BASE_URL for a local server, or ANTHROPIC_API_KEY)."
	case errors.As(err, &judgeErr) && errors.As(err, &failed):
		return "The answer was not judged, so it was taken off the branch ('tract log --all' lists it, and 'tract show'\n" +
			"its validator error). Send the message again (below), or judge with a model that follows the format\n" +
			"more closely (--model NAME)."
	case errors.As(err, &judgeErr):
		return "The answer was not judged: it stays on the branch (see 'tract show'). Judge with a model that follows\n" +
			"the format more closely (--model NAME)."
	}
	return ""
}

// replHint is errorHint for the errors of the interactive chat's own
// commands (/retry, /rewind, …), which errorHint's command-line remedies
// do not fit: it is printed after the error's line inside 'tract chat'.
func replHint(err error) string {
	var unanswered *repl.UnansweredError
	if errors.As(err, &unanswered) {
		return "To send it again, leave the chat (/exit) and run 'tract chat --retry-last'."
	}
	return ""
}

// missesSetting reports whether err holds an *llm.ConfigError about
// setting, alone or among the errors it joins (a client can miss its key
// and its model at once).
func missesSetting(err error, setting string) bool {
	var cfgErr *llm.ConfigError
	if errors.As(err, &cfgErr) && cfgErr.Setting == setting {
		return true
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if missesSetting(e, setting) {
				return true
			}
		}
	} else if inner := errors.Unwrap(err); inner != nil {
		return missesSetting(inner, setting)
	}
	return false
}

// tooLargeHint says which setting raises the limit err broke.
func tooLargeHint(err *tract.TooLargeError) string {
	switch err.Which {
	case tract.LimitMessageSize:
		return "Raise the limit with --max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE (for example --max-message-size 64MiB)."
	case tract.LimitLineSize:
		return "An import line may hold 4 times the message size limit and 1 MiB of metadata: raise the limit with\n" +
			"--max-message-size SIZE or TRACT_MAX_MESSAGE_SIZE (for example --max-message-size 64MiB)."
	case tract.LimitInputSize:
		return "Raise the limit with --max-input SIZE or TRACT_MAX_INPUT (for example --max-input 16GiB)."
	case tract.LimitMetaSize:
		return fmt.Sprintf("Metadata may hold at most %s: keep larger data in the text.", english.Bytes(err.Limit))
	}
	return ""
}

// exitCode maps an error to the process exit code: the one place that
// does (the table is exitCodeTable, in exitcodes.go). It matches typed and
// sentinel errors only, never message text. A new command needs nothing
// here when its errors are those of package tract and its own bad input
// is a usageError (usageErrorf) or a missing file a notFoundError; an
// error of a new kind gets a case here, under the class of the table it
// belongs to.
func exitCode(err error) int {
	var (
		exhausted *retry.ExhaustedError
		apiErr    *llm.APIError
		specErr   *retry.SpecError
		cfgErr    *llm.ConfigError
		judgeErr  *retry.JudgeReplyError
		tooLarge  *tract.TooLargeError
		taskErr   *tract.TaskIDError
		escalated *tract.EscalationError
		refused   *refusedError
		notFound  *notFoundError
	)
	switch {
	case isUsage(err), isUnknownCommand(err), errors.As(err, new(*envError)), errors.As(err, &specErr), errors.As(err, &cfgErr), errors.As(err, &tooLarge),
		errors.As(err, &taskErr), isBadInput(err):
		return exitUsage
	case errors.Is(err, tract.ErrSkipped):
		return exitSkipped
	case errors.Is(err, tract.ErrWaiting) && !errors.Is(err, context.Canceled):
		return exitWaiting
	case errors.Is(err, tract.ErrAnswered), errors.As(err, new(*tract.EscalationTakenUpError)):
		return exitConflict
	case errors.Is(err, tract.ErrEscalationNotFound):
		return exitNotFound
	case errors.Is(err, tract.ErrBadEscalationID):
		return exitUsage
	case errors.As(err, &exhausted):
		return exitExhausted
	case errors.As(err, &escalated), errors.As(err, &refused):
		return exitEscalated
	case errors.Is(err, context.Canceled):
		return exitInterrupt
	case errors.As(err, &apiErr), errors.As(err, &judgeErr):
		return exitModel
	case errors.Is(err, tract.ErrConflict):
		return exitConflict
	case errors.Is(err, tract.ErrCorrupt):
		// A damaged file is not a missing one, though the store's error
		// for it says ErrNotRepository too (it cannot be opened).
		return exitError
	case errors.As(err, &notFound), errors.Is(err, tract.ErrUnknownRevision), errors.Is(err, tract.ErrBranchNotFound),
		errors.Is(err, tract.ErrNotRepository):
		return exitNotFound
	}
	return exitError
}

// isBadInput reports the library's errors for input that the command
// line gave: text, metadata, a role, kind, branch name or revision that
// is invalid, ambiguous or taken. They are usage errors (exit 2), but the
// command's usage does not help with them.
func isBadInput(err error) bool {
	var ambiguous *tract.AmbiguousError
	for _, target := range [...]error{tract.ErrInvalidText, tract.ErrInvalidMeta, tract.ErrInvalidKind, tract.ErrInvalidRole,
		tract.ErrInvalidBranchName, tract.ErrBranchExists, tract.ErrBadRevision, tract.ErrReversedRange, tract.ErrNotOnChain,
		tract.ErrSummaryCount, compress.ErrEmptyRange, tract.ErrNoDriver} {
		if errors.Is(err, target) {
			return true
		}
	}
	return errors.As(err, &ambiguous)
}

// isUnknownCommand recognises cobra's error for an unknown subcommand
// ("unknown command \"x\" for \"tract\""), a plain error with no type to
// match: it is a usage error like an unknown flag.
func isUnknownCommand(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command ")
}

// newRootOnly returns the tract command without its subcommands.
func newRootOnly(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "tract",
		Short: "Keep LLM conversations the way git keeps code",
		Long: `tract keeps LLM conversations the way git keeps code, as content-addressed
commits in one file (or a PostgreSQL database), and generates validated
answers: failed attempts and the steering that corrected them stay in
'tract log --all' while the branch keeps only the clean answer. The
repository is --db, else $TRACT_DB, else the nearest .tract/tract.db. New
here? Run 'tract demo'.`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().StringVar(&f.DBFlag, "db", "", "the repository: a file or a postgres:// URL")
	setValueName(root.PersistentFlags(), "db", "PATH")
	root.PersistentFlags().BoolVarP(&f.Quiet, "quiet", "q", false, "show no progress line during long work")
	root.PersistentFlags().DurationVar(&f.LockTimeout, "lock-timeout", f.LockTimeout,
		"wait at most `DURATION` for a busy repository")
	// The default is $TRACT_LOCK_TIMEOUT's when set, which the help
	// cannot know: docs/sharing.md says it.
	root.PersistentFlags().Lookup("lock-timeout").DefValue = "0s"
	root.PersistentFlags().StringVar(&f.MaxMessageSize, "max-message-size", "",
		"the most text a message may hold (default 16MiB)")
	setValueName(root.PersistentFlags(), "max-message-size", "SIZE")
	// --version prints what 'tract version' prints (cobra prints
	// root.Version through the template when the flag is given).
	root.Version = versionLine()
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().Bool("version", false, "print tract's version, as 'tract version' does")
	root.PersistentFlags().BoolVar(&f.NoColor, "no-color", false, "print no colour (as NO_COLOR=1 or TERM=dumb do)")
	root.PersistentFlags().BoolVar(&f.NoPager, "no-pager", false, "do not page long output (log, reflog, show)")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		f.Context = cmd.Context()
		if f.NoColor {
			f.IO.Color = false
		}
		f.LockTimeoutSet = cmd.Flags().Changed("lock-timeout")
		f.MaxMessageSizeSet = cmd.Flags().Changed("max-message-size")
		return checkRevisionFlags(cmd)
	}
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	root.SetFlagErrorFunc(flagError)
	root.SetHelpCommand(newHelpCmd(f))
	root.SetHelpFunc(func(c *cobra.Command, _ []string) { writeHelp(c.OutOrStdout(), c, f.outWidth()) })
	return root
}

// newRootCmd returns the tract command with every subcommand.
func newRootCmd(f *Factory) *cobra.Command { return newRootCmdFor(f, nil) }

// newRootCmdFor returns the tract command for a run with args: with only
// the subcommand args name, when they name one, since building all of
// them (their flags, their help) took as long as a small command's work;
// with every one otherwise (help, completion, an unknown name that wants
// suggestions).
func newRootCmdFor(f *Factory, args []string) *cobra.Command {
	root := newRootOnly(f)
	name := commandName(root, args)
	all := subcommands()
	for _, c := range all {
		if c.name == name {
			root.AddCommand(c.build(f))
			// 'completion' is not one of them: a run of it has the whole
			// tree.
			root.CompletionOptions.DisableDefaultCmd = true
			return root
		}
	}
	for _, c := range all {
		root.AddCommand(c.build(f))
	}
	registerCompletions(root, f)
	return root
}

// commandName returns the subcommand name in args, after the global flags
// of root that come before it ("--db PATH log"); "" when there is none or
// a flag before it is not one of those.
func commandName(root *cobra.Command, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			return a
		}
		name, _, inline := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var fl *pflag.Flag
		if strings.HasPrefix(a, "--") {
			fl = root.PersistentFlags().Lookup(name)
		} else if len(name) == 1 {
			fl = root.PersistentFlags().ShorthandLookup(name)
		}
		if fl == nil || a == "--" {
			return ""
		}
		if !inline && fl.NoOptDefVal == "" {
			i++ // its value
		}
	}
	return ""
}

// subcommand is one of tract's commands: its name and its constructor.
type subcommand struct {
	name  string
	build func(*Factory) *cobra.Command
}

// subcommands returns tract's commands, in the order help lists them.
//
// A new command is its file (NewCmdX, with --json given by addJSONFlag,
// which names its docs/json.md sections), its tests, an entry here, a row
// in docs/commands.md's table of commands and, when it takes --json, its section
// of docs/json.md. Tests fail until those agree (docs_test.go, and in
// tests/ json_test.go's and exitcodes_test.go's tables, which want a run of
// its --json and one of its usage errors). Its exit codes are the classes
// of exitCodeTable, which docs/exit-codes.md's table and 'tract help exit-codes'
// are generated from; its completions, those of the flags it shares by name
// (registerCompletions).
func subcommands() []subcommand {
	commands := []subcommand{
		{"init", func(f *Factory) *cobra.Command { return newCmdInit(f, nil) }},
		{"demo", func(f *Factory) *cobra.Command { return newCmdDemo(f, nil) }},
		{"config", func(f *Factory) *cobra.Command { return newCmdConfig(f, nil) }},
		{"commit", func(f *Factory) *cobra.Command { return newCmdCommit(f, nil) }},
		{"log", func(f *Factory) *cobra.Command { return newCmdLog(f, nil) }},
		{"search", func(f *Factory) *cobra.Command { return newCmdSearch(f, nil) }},
		{"graph", func(f *Factory) *cobra.Command { return newCmdGraph(f, nil) }},
		{"show", func(f *Factory) *cobra.Command { return newCmdShow(f, nil) }},
		{"reset", func(f *Factory) *cobra.Command { return newCmdReset(f, nil) }},
		{"branch", func(f *Factory) *cobra.Command { return newCmdBranch(f, nil) }},
		{"checkout", func(f *Factory) *cobra.Command { return newCmdCheckout(f, nil) }},
		{"switch", func(f *Factory) *cobra.Command { return newCmdSwitch(f, nil) }},
		{"status", func(f *Factory) *cobra.Command { return newCmdStatus(f, nil) }},
		{"compile", func(f *Factory) *cobra.Command { return newCmdCompile(f, nil) }},
		{"chat", func(f *Factory) *cobra.Command { return newCmdChat(f, nil) }},
		{"escalations", func(f *Factory) *cobra.Command { return newCmdEscalations(f, nil) }},
		{"escalation", func(f *Factory) *cobra.Command { return newCmdEscalation(f, nil) }},
		{"events", func(f *Factory) *cobra.Command { return newCmdEvents(f, nil) }},
		{"stats", func(f *Factory) *cobra.Command { return newCmdStats(f, nil) }},
		{"compress", func(f *Factory) *cobra.Command { return newCmdCompress(f, nil) }},
		{"models", func(f *Factory) *cobra.Command { return newCmdModels(f, nil) }},
		{"serve", func(f *Factory) *cobra.Command { return newCmdServe(f, nil) }},
		{"mcp", func(f *Factory) *cobra.Command { return newCmdMCP(f, nil) }},
		{"import", func(f *Factory) *cobra.Command { return newCmdImport(f, nil) }},
		{"export", func(f *Factory) *cobra.Command { return newCmdExport(f, nil) }},
		{"fsck", func(f *Factory) *cobra.Command { return newCmdFsck(f, nil) }},
		{"gc", func(f *Factory) *cobra.Command { return newCmdGC(f, nil) }},
		{"compact", func(f *Factory) *cobra.Command { return newCmdCompact(f, nil) }},
		{"copy", func(f *Factory) *cobra.Command { return newCmdCopy(f, nil) }},
		{"migrate", func(f *Factory) *cobra.Command { return newCmdMigrate(f, nil) }},
		{"reflog", func(f *Factory) *cobra.Command { return newCmdReflog(f, nil) }},
		{"version", newCmdVersion},
		{"exit-codes", func(*Factory) *cobra.Command { return newExitCodesTopic() }},
	}
	// A guide's topic is built, as a command is, only when it is needed.
	for _, g := range docs.Guides() {
		commands = append(commands, subcommand{g.Topic, func(*Factory) *cobra.Command { return newGuideTopic(g) }})
	}
	return commands
}

// Argument validators that report usage errors.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			got := english.Count(len(args), "argument", "arguments")
			if len(args) > 0 {
				got += ": " + strings.Join(args, " ")
			}
			return usageErrorf("%s takes %s (got %s)", cmd.CommandPath(), what, got)
		}
		return nil
	}
}

func maxArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > n {
			return usageErrorf("%s takes at most %s (got %s: %s)", cmd.CommandPath(), what, english.Count(len(args), "argument", "arguments"), strings.Join(args, " "))
		}
		return nil
	}
}

// emptyRevision is the one message for an empty revision or ref, and
// emptyBranchName for an empty branch name, as an argument or a flag's
// value, whatever the command: the library reads "" as "the default"
// (HEAD, the root, HEAD's branch) where it accepts one, so an empty string
// typed on the command line must stop here.
const (
	emptyRevision   = `empty revision "": name a branch, a commit hash or HEAD (for example HEAD~1)`
	emptyBranchName = `empty branch name "": name a branch ('tract branch' lists them)`
)

// revisionArgs checks the arguments with args, then that none is empty:
// each names a revision, branch or ref.
func revisionArgs(args cobra.PositionalArgs) cobra.PositionalArgs {
	return branchArgs(args, 0)
}

// branchArgs is revisionArgs for a command whose first names arguments
// are branch names (the others revisions).
func branchArgs(args cobra.PositionalArgs, names int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, a []string) error {
		if err := args(cmd, a); err != nil {
			return err
		}
		for i, s := range a {
			switch {
			case s == "" && i < names:
				return usageErrorf("%s", emptyBranchName)
			case s == "":
				return usageErrorf("%s", emptyRevision)
			}
		}
		return nil
	}
}

// revisionFlags and branchFlags are the annotations of a command that
// list, separated by spaces, its flags whose values name a revision or
// ref, and a branch.
const (
	revisionFlags = "tract-revision-flags"
	branchFlags   = "tract-branch-flags"
)

// markRevisionFlag says that flag name of cmd names a revision or ref, so
// that giving it an empty value is a usage error.
func markRevisionFlag(cmd *cobra.Command, name string) { annotateFlag(cmd, revisionFlags, name) }

// markBranchFlag says that flag name of cmd names a branch, so that giving
// it an empty value is a usage error.
func markBranchFlag(cmd *cobra.Command, name string) { annotateFlag(cmd, branchFlags, name) }

func annotateFlag(cmd *cobra.Command, key, name string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[key] = strings.TrimSpace(cmd.Annotations[key] + " " + name)
}

// checkRevisionFlags fails when a revision or branch flag of cmd was given
// empty.
func checkRevisionFlags(cmd *cobra.Command) error {
	for _, kind := range [...]struct{ key, msg string }{{revisionFlags, emptyRevision}, {branchFlags, emptyBranchName}} {
		for _, name := range strings.Fields(cmd.Annotations[kind.key]) {
			if fl := cmd.Flags().Lookup(name); fl != nil && fl.Changed && fl.Value.String() == "" {
				return usageErrorf("--%s: %s", name, kind.msg)
			}
		}
	}
	return nil
}

// withTractOn is withTract acting on branch (see Tract.OnBranch) when
// branch is set, and on HEAD otherwise.
func withTractOn(f *Factory, branch string, fn func(*tract.Tract) error) error {
	return withTract(f, func(t *tract.Tract) error {
		if branch != "" {
			t = t.OnBranch(branch)
		}
		return fn(t)
	})
}

// branchFlagUsage is the help of every command's --branch (a view, see
// tract.OnBranch): HEAD in the command's revisions means the branch's tip.
const branchFlagUsage = "work on branch `NAME`; HEAD then means NAME's tip"

// addBranchFlag registers --branch on a command that writes to a branch.
func addBranchFlag(cmd *cobra.Command, branch *string) {
	cmd.Flags().StringVar(branch, "branch", "", branchFlagUsage)
	markBranchFlag(cmd, "branch")
}

// position names where a command acted: "HEAD", or "branch NAME".
func position(t *tract.Tract) string {
	if b := t.Branch(); b != "" {
		return "branch " + b
	}
	return "HEAD"
}

// withTract opens the repository, runs fn and closes it.
func withTract(f *Factory, fn func(*tract.Tract) error) error {
	t, err := f.Open()
	if err != nil {
		return err
	}
	defer t.Close()
	return fn(t)
}
