package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Exit codes. They are part of the CLI's contract: exitCodeTable describes
// each, and 'tract help exit-codes' and docs/exit-codes.md's table are
// generated from it (TestDocs_ExitCodesPage fails when the page's copy is
// stale). Scripts rely on them, so a code never changes meaning; a new
// class of failure gets a new code and a row in exitCodeTable. A new
// command needs none: its failures fall into these classes.
const (
	exitOK        = 0   // success
	exitError     = 1   // a failure of none of the classes below: damaged, locked, read-only, I/O
	exitUsage     = 2   // the command line or its input is wrong
	exitExhausted = 3   // validation failed on every attempt (the escalation was aborted)
	exitModel     = 4   // the model or its transport failed, or a judge's reply was no verdict
	exitConflict  = 5   // HEAD moved under the operation (retry it)
	exitSkipped   = 6   // the escalation was answered skip
	exitEscalated = 7   // a failure retrying cannot fix: 401, 403, 400, context length, a blocked answer
	exitNotFound  = 8   // a revision, branch, ref, commit, repository or input file does not exist
	exitWaiting   = 9   // an escalation waits in the repository for an answer (--on-exhausted exit)
	exitInterrupt = 130 // interrupted (SIGINT, SIGTERM)
)

// exitCodeInfo is one row of the exit-code table.
type exitCodeInfo struct {
	Code int
	// Name is the class's one-word name.
	Name string
	// Meaning says when a command exits with the code, in Markdown:
	// commands, flags and values in backquotes, which the help topic
	// drops.
	Meaning string
}

// exitCodeTable is the exit-code table, in the order of the codes: the
// one source of 'tract help exit-codes' and of docs/exit-codes.md's table.
func exitCodeTable() []exitCodeInfo {
	return []exitCodeInfo{
		{exitOK, "ok", "success"},
		{exitError, "error", "a failure of none of the classes below: the repository is damaged (or `fsck` found problems), " +
			"stayed locked longer than `--lock-timeout`, is read-only; a database is unreachable, refuses the login or has " +
			"too many connections, sent no reply in time, lost the connection (or a COMMIT's reply: look with `tract log`), " +
			"or its schema is missing or older (`tract migrate`); HEAD is detached where a branch is needed; " +
			"the branch to delete is HEAD's; an I/O error"},
		{exitUsage, "usage", "the command line or its input is wrong: an unknown command or flag, a bad flag value or " +
			"`--validate` spec, an empty or malformed revision (`tract log ''`), an ambiguous hash, an invalid role, kind, " +
			"text (an empty message), metadata or branch name, a branch name that is taken, malformed `import` input, input over a " +
			"size limit, no model configured (`TRACT_MODEL`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`), an unknown `--provider`, " +
			"a `copy` into a repository that is not empty, `compress --content` given a number of summaries other than " +
			"the groups', an empty `compress` range"},
		{exitExhausted, "exhausted", "validation failed on every attempt (the escalation was aborted)"},
		{exitModel, "model", "the model or its transport failed after its retries, or an `llm:` judge whose reply is not " +
			"its JSON verdict (the answer was not judged)"},
		{exitConflict, "conflict", "another writer moved the branch during the operation; nothing was lost, and what the operation made is named; " +
			"or an escalation was answered already (the answer that won is named), or its turn went on already (`chat --resume`)"},
		{exitSkipped, "skipped", "an escalation was answered `skip`"},
		{exitEscalated, "escalated", "a failure retrying cannot fix: 401, 403, 400, a context over the model's window, " +
			"a validator reporting the answer blocked"},
		{exitNotFound, "not-found", "a revision, branch, ref, commit, repository or input file that does not exist " +
			"(`tract show nosuch`, `tract import missing.jsonl`, no repository found, an unknown escalation id)"},
		{exitWaiting, "waiting", "the turn's escalation waits in the repository for an answer (`chat --on-exhausted exit`, " +
			"or `chat --resume` of an escalation not answered yet with `--on-exhausted exit`); answer it with " +
			"`tract escalation answer`, then finish the turn with `tract chat --resume ID`"},
		{exitInterrupt, "interrupted", "Ctrl-C or SIGTERM (a second one exits at once, without waiting for the cleanup); every commit made so far is intact"},
	}
}

// newExitCodesTopic is 'tract help exit-codes': a help topic (a command
// with no Run), which 'tract --help' lists under "Additional help topics".
func newExitCodesTopic() *cobra.Command {
	var b strings.Builder
	b.WriteString("Every tract command exits with one of these codes:\n\n")
	for _, c := range exitCodeTable() {
		meaning := strings.ReplaceAll(c.Meaning, "`", "")
		fmt.Fprintf(&b, "  %3d  %-11s  %s\n", c.Code, c.Name, wrap(meaning, 60, strings.Repeat(" ", 20)))
	}
	b.WriteString("\nA script can branch on them: for example 'tract show REV' exits 8 when REV\n" +
		"names nothing, and 'tract chat --validate ...' exits 3 when every attempt\nfailed.")
	return &cobra.Command{
		Use:   "exit-codes",
		Short: "The exit codes of every command",
		Long:  b.String(),
	}
}

// exitCodesMarkdown is the exit-code table as docs/exit-codes.md holds it.
func exitCodesMarkdown() string {
	var b strings.Builder
	b.WriteString("| code | name | when |\n|---|---|---|\n")
	for _, c := range exitCodeTable() {
		fmt.Fprintf(&b, "| %d | %s | %s |\n", c.Code, c.Name, c.Meaning)
	}
	return b.String()
}

// wrap breaks s into lines of at most width bytes at spaces, indenting
// every line after the first with indent.
func wrap(s string, width int, indent string) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteString("\n" + indent)
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
