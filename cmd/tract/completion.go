package main

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
)

// Shell completion. Cobra's 'completion' command writes the scripts; they
// call the hidden '__complete' command, which asks the functions here for
// the candidates of an argument or a flag's value: branch names and
// revisions read from the repository, and the fixed values of flags.
//
// Completing runs on every Tab, so it must be quick and quiet: it opens
// the repository read-only, waits at most completionWait for another
// process's lock, and offers nothing (and no file names) when there is no
// repository or it cannot be read.

// completionWait bounds how long completion waits for the repository.
const completionWait = 250 * time.Millisecond

// completionHashes is how many of HEAD's latest commits completion offers
// by their short hash, once a hex prefix is typed.
const completionHashes = 50

// completion is a completion function of an argument or a flag's value.
type completion = func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective)

// registerCompletions gives root's commands their completions: the
// positional arguments of those that take revisions or branches, and the
// flags with values tract can list. A command added later gets the flag
// completions of the flags it shares by name (--branch, --validate, …);
// its own arguments need a case in argCompletion.
func registerCompletions(root *cobra.Command, f *Factory) {
	root.InitDefaultCompletionCmd()
	for _, cmd := range root.Commands() {
		if cmd.Name() == "completion" && cmd.RunE == nil {
			// Cobra's completion command only groups the shells', and
			// would print its help for an unknown shell and succeed:
			// running it makes its argument check (NoArgs) apply.
			cmd.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			cmd.Use = "completion bash|zsh|fish|powershell"
			for _, shell := range cmd.Commands() {
				installAsExamples(shell)
			}
		}
		if cmd.ValidArgsFunction == nil {
			if fn := argCompletion(f, cmd.Name()); fn != nil {
				cmd.ValidArgsFunction = fn
			}
		}
		cmd.Flags().VisitAll(func(fl *pflag.Flag) {
			if fn := flagCompletion(f, cmd.Name(), fl.Name); fn != nil {
				_ = cmd.RegisterFlagCompletionFunc(fl.Name, fn) // an error only says one is registered already
			}
		})
	}
}

// argCompletion is the completion of command name's positional arguments
// (nil: cobra's default).
func argCompletion(f *Factory, name string) completion {
	switch name {
	case "show", "log", "compile", "reset", "checkout", "export", "graph":
		return upTo(1, revisions(f))
	case "switch":
		return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if create, _ := cmd.Flags().GetBool("create"); create || len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp // a new name
			}
			return branches(f)(cmd, args, toComplete)
		}
	case "branch":
		return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			del, _ := cmd.Flags().GetBool("delete")
			switch {
			case del && len(args) == 0:
				return branches(f)(cmd, args, toComplete)
			case !del && len(args) == 1:
				return revisions(f)(cmd, args, toComplete) // START
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
	case "reflog":
		return upTo(1, refs(f))
	case "import", "completion", "help":
		return nil
	}
	return noFiles
}

// flagCompletion is the completion of flag's value on command name (nil:
// cobra's default, file names).
func flagCompletion(f *Factory, command, flag string) completion {
	switch flag {
	case "branch":
		return branches(f)
	case "validate":
		return validators(f)
	case "on-exhausted":
		return fixed(onExhaustedValues...)
	case "resume":
		return escalationIDs(f)
	case "feedback":
		return fixed(string(retry.FeedbackPlain), string(retry.FeedbackXML))
	case "retry-context":
		return fixed(string(tract.ContextConversation), string(tract.ContextFresh))
	case "role":
		return fixed(string(tract.RoleSystem), string(tract.RoleUser), string(tract.RoleAssistant), string(tract.RoleTool))
	case "kind":
		return fixed(string(tract.KindMessage), string(tract.KindSteering), string(tract.KindSummary), string(tract.KindNote), string(tract.KindError))
	case "provider":
		return fixed(llm.ProviderOpenAI, llm.ProviderAnthropic)
	case "structured":
		return fixed(structuredAuto, structuredOff)
	}
	switch command + " --" + flag {
	case "compress --from", "compress --to":
		return revisions(f)
	case "events --format":
		return fixed("jsonl", "text")
	case "import --format":
		return fixed("messages", "openai")
	}
	return nil
}

// noFiles offers nothing, and no file names either.
func noFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveNoFileComp
}

// upTo completes the first n arguments with fn, and nothing after them.
func upTo(n int, fn completion) completion {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return fn(cmd, args, toComplete)
	}
}

// fixed completes one of values.
func fixed(values ...string) completion {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return values, cobra.ShellCompDirectiveNoFileComp
	}
}

// withRepository runs fn on the repository opened read-only for
// completion, and offers nothing when it cannot be opened in time.
func withRepository(f *Factory, fn func(context.Context, *tract.Tract) []cobra.Completion) ([]cobra.Completion, cobra.ShellCompDirective) {
	p, err := f.RepoPath(false)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	t, err := tract.Open(p, tract.WithReadOnly(), tract.WithLockTimeout(completionWait))
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer t.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 4*completionWait)
	defer cancel()
	return fn(ctx, t), cobra.ShellCompDirectiveNoFileComp
}

// branchNames lists the branches, each described by its tip.
func branchNames(ctx context.Context, t *tract.Tract) []cobra.Completion {
	bs, err := t.Branches(ctx)
	if err != nil {
		return nil
	}
	out := make([]cobra.Completion, 0, len(bs))
	for _, b := range bs {
		out = append(out, cobra.CompletionWithDesc(b.Name, "branch at "+b.Hash.Short()))
	}
	return out
}

// branches completes a branch name.
func branches(f *Factory) completion {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withRepository(f, branchNames)
	}
}

// escalationIDs completes the id of an escalation that waits, described
// by its state and task (or reason).
func escalationIDs(f *Factory) completion {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withRepository(f, func(ctx context.Context, t *tract.Tract) []cobra.Completion {
			es, err := t.Escalations(ctx)
			if err != nil {
				return nil
			}
			out := make([]cobra.Completion, 0, len(es))
			for _, e := range es {
				out = append(out, cobra.CompletionWithDesc(e.ID, fmt.Sprintf("%s, %s", e.State, cmp.Or(e.Task, string(e.Reason)))))
			}
			return out
		})
	}
}

// refs completes what 'tract reflog' takes: HEAD, a branch or STRANDED.
func refs(f *Factory) completion {
	return func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withRepository(f, func(ctx context.Context, t *tract.Tract) []cobra.Completion {
			return append([]cobra.Completion{"HEAD", cobra.CompletionWithDesc("STRANDED", "results a conflict kept off their branch")},
				branchNames(ctx, t)...)
		})
	}
}

// revisions completes a revision: the branches, HEAD and ORIG_HEAD, and,
// once a hex prefix is typed, the short hashes of HEAD's latest commits.
func revisions(f *Factory) completion {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return withRepository(f, func(ctx context.Context, t *tract.Tract) []cobra.Completion {
			out := append([]cobra.Completion{"HEAD"}, branchNames(ctx, t)...)
			if st, err := t.Status(ctx); err == nil && !st.OrigHead.IsZero() {
				out = append(out, cobra.CompletionWithDesc("ORIG_HEAD", "HEAD's previous position"))
			}
			if toComplete == "" || strings.Trim(strings.ToLower(toComplete), "0123456789abcdef") != "" {
				return out
			}
			cs, err := t.Log(ctx, tract.LogLimit(completionHashes))
			if err != nil {
				return out
			}
			for _, c := range cs {
				if !strings.HasPrefix(c.Hash.String(), strings.ToLower(toComplete)) {
					continue
				}
				out = append(out, cobra.CompletionWithDesc(c.Hash.Short(), string(c.Role)+": "+strings.ReplaceAll(preview(c.Text, 50), "\t", " ")))
			}
			return out
		})
	}
}

// validators completes a --validate spec: a kind the Factory's parser
// knows (described by its summary), then, after "schema:", a file name.
func validators(f *Factory) completion {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if path, ok := strings.CutPrefix(toComplete, "schema:"); ok {
			return schemaFiles(path)
		}
		var out []cobra.Completion
		dir := cobra.ShellCompDirectiveNoFileComp
		for _, k := range f.validators().Kinds() {
			if !strings.HasPrefix(k.Prefix(), toComplete) {
				continue
			}
			out = append(out, cobra.CompletionWithDesc(k.Prefix(), k.Summary))
			if k.Arg != "" {
				// Its argument follows the colon: no space after it.
				dir |= cobra.ShellCompDirectiveNoSpace
			}
		}
		return out, dir
	}
}

// schemaFiles completes "schema:PATH": the directories and .json files
// whose path begins with path.
func schemaFiles(path string) ([]cobra.Completion, cobra.ShellCompDirective) {
	dir, base := filepath.Split(path)
	list := dir
	if list == "" {
		list = "."
	}
	es, err := os.ReadDir(list)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	dirs := false
	for _, e := range es {
		name := e.Name()
		if !strings.HasPrefix(name, base) || strings.HasPrefix(name, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		switch {
		case e.IsDir():
			out, dirs = append(out, "schema:"+dir+name+"/"), true
		case strings.HasSuffix(name, ".json"):
			out = append(out, "schema:"+dir+name)
		}
	}
	directive := cobra.ShellCompDirectiveNoFileComp
	if dirs {
		directive |= cobra.ShellCompDirectiveNoSpace // a directory's files follow it
	}
	return out, directive
}

// installAsExamples moves the install instructions cobra writes into a
// shell's completion command's Long, after its first paragraph, to its
// examples, so that its help has tract's shape (a one-paragraph
// description, then flags, then examples): the commands to run stay as
// they are, the prose around them becomes comments.
func installAsExamples(cmd *cobra.Command) {
	desc, rest, ok := strings.Cut(cmd.Long, "\n\n")
	if !ok {
		return
	}
	var b strings.Builder
	for _, l := range strings.Split(rest, "\n") {
		switch {
		case strings.TrimSpace(l) == "":
		case strings.HasPrefix(l, "\t"):
			b.WriteString("  " + strings.TrimLeft(l, "\t") + "\n")
		default:
			b.WriteString("  # " + wrap(strings.TrimSpace(strings.TrimLeft(l, "#")), 76, "  # ") + "\n")
		}
	}
	cmd.Long = desc
	cmd.Example = strings.TrimRight(b.String(), "\n")
}
