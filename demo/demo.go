// Package demo runs tract's main job offline, for a newcomer to watch:
// validated generation against a scripted model.
//
// Run starts an OpenAI-compatible model server on the loopback interface
// (package scriptserver, which tract's own tests use through llmtest)
// that replays a fixed script, and drives a repository through the real
// llm.OpenAI client, the real validators and the real store:
//
//  1. a task whose answer must be JSON: the model's first answer is not,
//     the json validator rejects it, a steering message quoting the
//     diagnosis is committed, the second answer passes and the branch is
//     purified (the failed attempt and the steering stay as an orphaned
//     side chain);
//  2. a task checked by a command (cmd:sh -n, a shell syntax check run on
//     the answer), accepted on the first attempt;
//  3. a compress of that second turn into one summary written by the
//     model, which leaves the purified first turn in place.
//
// Both tasks carry task ids, so Tract.Stats reports on them. What Run
// prints is narration for a person, not a format to parse.
//
// # Caveats
//
// The model is scripted: its answers do not depend on the questions. Run
// expects a repository without commits (it refuses one that has any, so
// that it never mixes its script into real work), and runs the command
// validator in the repository's directory: it writes nothing anywhere
// else. No environment variable is read: OPENAI_BASE_URL and
// OPENAI_API_KEY do not redirect it to a real model.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/internal/english"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/llm/scriptserver"
	"github.com/tractdag/tract/retry"
)

// Model is the name the scripted model answers as.
const Model = "tract-demo-scripted"

// The tasks of the demo, as their ids appear in the stats.
const (
	TaskJSON    = "demo-1:json"
	TaskCommand = "demo-2:shell"
)

// ErrNotEmpty is returned by Run for a repository that already has
// commits on its branch.
var ErrNotEmpty = errors.New("the demo needs an empty repository")

// The script: what the user asks and what the model answers.
const (
	systemPrompt = "You are a precise assistant: answer in exactly the format asked for, with nothing around it."

	jsonQuestion = "Describe Ada Lovelace as a JSON object with her name and year of birth."
	// jsonFirst is not JSON: the json validator rejects it.
	jsonFirst = `Sure! Here it is: {name: "Ada Lovelace", born: 1815}`
	jsonFixed = `{"name": "Ada Lovelace", "born": 1815}`

	commandQuestion = "Write a POSIX shell command that counts the lines of every .go file under the current directory. Answer with the command only."
	commandAnswer   = `find . -name '*.go' -exec cat {} + | wc -l`
	// commandCheck checks the answer's shell syntax without running it:
	// sh -n reads the answer from standard input.
	commandCheck = "sh -n"

	summary = "Asked for a shell command counting the lines of the .go files; answered with find, cat and wc -l."
)

// Result is what Run did.
type Result struct {
	// JSON and Command are the two validated turns.
	JSON, Command *tract.ChatResult
	// Steering is the text of the steering message of the JSON task.
	Steering string
	// Compress is the compression of the command task's turn.
	Compress *tract.CompressResult
	// Requests is the number of requests the scripted model answered.
	Requests int
}

// Run plays the demo on t, an empty repository, narrating to w.
func Run(ctx context.Context, t *tract.Tract, w io.Writer) (*Result, error) {
	if _, head, err := t.Head(ctx); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	} else if !head.IsZero() {
		return nil, fmt.Errorf("demo: %w: %s already has commits", ErrNotEmpty, t.Path())
	}
	srv, err := scriptserver.Start()
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	defer srv.Close()
	srv.Reply(scriptserver.Answer(jsonFirst), scriptserver.Answer(commandAnswer), scriptserver.Answer(summary)).
		When("failed validation", scriptserver.Answer(jsonFixed))
	client, err := llm.NewOpenAI(
		llm.WithBaseURL(srv.URL()),
		llm.WithModel(Model),
		// Straight to loopback, whatever HTTP_PROXY says.
		llm.WithHTTPClient(&http.Client{Transport: &http.Transport{}}),
		llm.WithMaxRetries(0),
	)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}

	// The narration's own lines fit 80 columns; the texts it quotes (a
	// question, an answer, a diagnosis) are cut to the terminal by the
	// command line.
	fmt.Fprintf(w, "The model is scripted: a server on %s\n", srv.URL())
	fmt.Fprintln(w, "replays canned answers, whatever it is asked. The client, validators, retries")
	fmt.Fprintln(w, "and repository are tract's real ones.")

	res := &Result{}
	fmt.Fprintf(w, "\n1. A task whose answer must be JSON (--validate json, task %s)\n", TaskJSON)
	res.JSON, res.Steering, err = chat(ctx, t, w, client, TaskJSON, jsonQuestion, retry.JSON())
	if err != nil {
		return res, err
	}

	fmt.Fprintf(w, "\n2. A task checked by a command, a shell syntax check (task %s)\n", TaskCommand)
	fmt.Fprintf(w, "   --validate 'cmd:%s'\n", commandCheck)
	check, err := retry.Command(commandCheck, retry.WithBaseDir(filepath.Dir(t.Path())))
	if err != nil {
		return res, fmt.Errorf("demo: %w", err)
	}
	if res.Command, _, err = chat(ctx, t, w, client, TaskCommand, commandQuestion, check); err != nil {
		return res, err
	}

	fmt.Fprintf(w, "\n3. Compress: the shell task's turn becomes a summary the model writes\n   tract compress --from %s\n", res.Command.User.Short())
	res.Compress, err = t.CompressRange(ctx, res.Command.User.String(), "", tract.SummaryClient(client))
	if err != nil {
		return res, fmt.Errorf("demo: compress: %w", err)
	}
	c := res.Compress
	fmt.Fprintf(w, "   %s replaced by %s (about %d tokens before, %d after);\n   the old chain stays in 'tract log --all'\n",
		english.Count(len(c.Sources), "commit", "commits"), english.Count(len(c.Summaries), "summary", "summaries"),
		c.TokensBefore, c.TokensAfter)
	res.Requests = len(srv.Requests())
	return res, nil
}

// chat runs one validated turn, narrating its attempts, and returns the
// text of its (last) steering message.
func chat(ctx context.Context, t *tract.Tract, w io.Writer, client llm.Client, task, question string, v retry.Validator) (*tract.ChatResult, string, error) {
	fmt.Fprintf(w, "   user: %s\n", question)
	var steering string
	var showErr error
	res, err := t.Chat(ctx, question,
		tract.UseClient(client),
		tract.SystemPrompt(systemPrompt),
		tract.Task(task),
		tract.Validate(v),
		tract.OnAttempt(func(a tract.Attempt) {
			if a.OK {
				fmt.Fprintf(w, "   attempt %d/%d: passed\n", a.Number, a.Max)
				return
			}
			fmt.Fprintf(w, "   attempt %d/%d: %s\n", a.Number, a.Max, firstLine(a.Text))
			fmt.Fprintf(w, "     rejected: %s\n", firstLine(a.Diagnosis))
		}),
		tract.OnEvent(func(ev tract.Event) {
			if ev.Event != tract.EventFeedbackInjected {
				return
			}
			c, err := t.Show(ctx, ev.Commit.String())
			if err != nil {
				showErr = err
				return
			}
			steering = c.Text
			fmt.Fprintf(w, "   steering (committed, then sent): %s\n", firstLine(c.Text))
		}),
	)
	if err == nil {
		err = showErr
	}
	if err != nil {
		return res, steering, fmt.Errorf("demo: task %s: %w", task, err)
	}
	if res.Purified {
		fmt.Fprintf(w, "   purified: the branch keeps only the accepted answer; %s and\n   the steering hang off it in 'tract log --all'\n",
			english.Count(res.Attempts-1, "failed attempt", "failed attempts"))
	}
	fmt.Fprintf(w, "   answer (%s): %s\n", res.Commit.Short(), res.Text)
	return res, steering, nil
}

// firstLine returns the first line of s, marked when more follows.
func firstLine(s string) string {
	if line, _, more := strings.Cut(s, "\n"); more {
		return line + " …"
	}
	return s
}
