package tests

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// The docs test runs the examples of README.md, ARCHITECTURE.md and
// docs/*.md, so that no example drifts from what the command does. The
// convention, which ARCHITECTURE.md states for writers ("Documentation"):
//
//   - A fenced block marked console is run; every other fenced block is
//     shown only, and may not hold a line starting with "$ tract" (an
//     example with a prompt is an example someone will trust).
//   - In a console block, a line starting with "$ " is a command, run with
//     sh -c; the lines after it, up to the next command or the end of the
//     block, are what it prints: standard output and standard error as
//     they interleave on a terminal, then "[exit N]" when it exits with
//     N > 0.
//   - Expected output matches exactly, except that a short (8) or full
//     (64) hex hash matches any hash of its length (hashes depend on the
//     time of each commit), and a line "..." matches any number of lines.
//   - "$ export ..." lines are shown, not run: the test's environment
//     already points the model settings at a scripted model.
//   - The scripted model answers what comments before the block queue:
//     <!-- docs-test: reply TEXT --> queues an answer; <!-- docs-test:
//     call NAME ARGUMENTS --> queues an answer that calls the tool NAME
//     with the JSON ARGUMENTS; <!-- docs-test:
//     when MATCH => TEXT --> answers TEXT whenever the last message
//     contains MATCH. Every queued answer must be used.
//   - Each page runs in a fresh directory of its own, its blocks in order,
//     with HOME there (written "~" in the output), no repository and no
//     settings.
//
// 'go test ./tests -run TestDocs_Examples -update-docs' rewrites the
// expected output of each command that does not match with what it
// printed.

var updateDocs = flag.Bool("update-docs", false, "rewrite the expected output of the docs' failing examples")

// docsPages returns README.md, ARCHITECTURE.md and every page of docs/,
// as paths from this package's directory.
func docsPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	return append([]string{filepath.Join("..", "README.md"), filepath.Join("..", "ARCHITECTURE.md")}, pages...)
}

// docStep is one thing the docs test does, in page order: queue a
// scripted reply, or run a command and compare what it printed.
type docStep struct {
	line int // the 1-based line of the command or comment

	// A comment's reply: Match empty queues it, else it is a rule. A
	// call's reply calls the tool callName with reply as its arguments.
	match, reply string
	callName     string
	isReply      bool

	// A command, and the lines of its expected output (first, end: their
	// 0-based line range in the page).
	command    string
	want       []string
	first, end int
}

var (
	fence      = regexp.MustCompile("^\\s*```")
	docComment = regexp.MustCompile(`^<!-- docs-test: (.*) -->$`)
	whenRule   = regexp.MustCompile(`^when (.+?) => (.+)$`)
)

// parseDocSteps reads a page's steps; it fails t on a shown block with a
// "$ tract" line and on a comment it does not understand.
func parseDocSteps(t *testing.T, page string, data []byte) []docStep {
	t.Helper()
	lines := strings.Split(string(data), "\n")
	var steps []docStep
	inBlock, console := false, false
	var cur *docStep
	closeStep := func(i int) {
		if cur != nil {
			cur.end = i
			steps = append(steps, *cur)
			cur = nil
		}
	}
	for i, l := range lines {
		if fence.MatchString(l) {
			if inBlock {
				closeStep(i)
				inBlock, console = false, false
				continue
			}
			inBlock = true
			console = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), "`")) == "console"
			continue
		}
		if !inBlock {
			if m := docComment.FindStringSubmatch(l); m != nil {
				d := m[1]
				switch {
				case strings.HasPrefix(d, "reply "):
					steps = append(steps, docStep{line: i + 1, isReply: true, reply: strings.TrimPrefix(d, "reply ")})
				case strings.HasPrefix(d, "call ") && strings.Contains(strings.TrimPrefix(d, "call "), " "):
					name, args, _ := strings.Cut(strings.TrimPrefix(d, "call "), " ")
					steps = append(steps, docStep{line: i + 1, isReply: true, callName: name, reply: args})
				case whenRule.MatchString(d):
					w := whenRule.FindStringSubmatch(d)
					steps = append(steps, docStep{line: i + 1, isReply: true, match: w[1], reply: w[2]})
				default:
					t.Errorf("%s:%d: docs-test comment %q: want 'reply TEXT', 'call NAME ARGUMENTS' or 'when MATCH => TEXT'", page, i+1, d)
				}
			}
			continue
		}
		if !console {
			assert.False(t, strings.HasPrefix(strings.TrimSpace(l), "$ tract"),
				"%s:%d: a '$ tract' example in a block not marked console is never run: mark the block console", page, i+1)
			continue
		}
		if cmd, ok := strings.CutPrefix(l, "$ "); ok {
			closeStep(i)
			cur = &docStep{line: i + 1, command: cmd, first: i + 1}
			continue
		}
		require.NotNil(t, cur, "%s:%d: a console block starts with its first command, '$ ...'", page, i+1)
		cur.want = append(cur.want, l)
	}
	require.False(t, inBlock, "%s: a code block is not closed", page)
	return steps
}

// hexHash matches a short or full commit hash.
var hexHash = regexp.MustCompile(`\b(?:[0-9a-f]{64}|[0-9a-f]{8})\b`)

// outputPattern is the expression an example's expected output stands
// for: each line literally, a hash as any hash, "..." as any lines.
func outputPattern(want []string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`\A`)
	for _, l := range want {
		if l == "..." {
			b.WriteString(`(?:.*\n)*?`)
			continue
		}
		q := regexp.QuoteMeta(l)
		q = hexHash.ReplaceAllStringFunc(q, func(h string) string { return fmt.Sprintf("[0-9a-f]{%d}", len(h)) })
		b.WriteString(q + `\n`)
	}
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// runDocCommand runs one example's command line in dir and returns what
// it printed, "[exit N]" last when it failed.
func runDocCommand(t *testing.T, dir string, env []string, command string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", command)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out // one pipe: the order a terminal shows
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exitErr):
		fmt.Fprintf(&out, "[exit %d]\n", exitErr.ExitCode())
	default:
		require.NoError(t, err, "running %q", command)
	}
	assertNoCrash(t, result{Args: []string{command}, Stdout: out.String()})
	return strings.ReplaceAll(out.String(), dir, "~")
}

// TestDocs_Examples runs every console example of the README and docs/
// against the built command and a scripted model (see the convention
// above).
func TestDocs_Examples(t *testing.T) {
	fileOnly(t, "the examples show repositories in files (.tract/tract.db)")
	for _, page := range docsPages(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		steps := parseDocSteps(t, page, data)
		if !slices.ContainsFunc(steps, func(s docStep) bool { return s.command != "" }) {
			continue
		}
		name := strings.TrimPrefix(page, filepath.Join("..", "")+string(filepath.Separator))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runDocPage(t, page, data, steps)
		})
	}
}

// runDocPage runs one page's steps in a directory of its own.
func runDocPage(t *testing.T, page string, data []byte, steps []docStep) {
	srv := llmtest.NewServer(t)
	dir := t.TempDir()
	env := []string{
		"HOME=" + dir,
		"PATH=" + filepath.Dir(tractBin) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"LANG=C.UTF-8",
		"NO_COLOR=1",
		"TRACT_BACKOFF=1ms",
		"TRACT_CONFIG=" + filepath.Join(dir, ".config", "tract.json"),
		"OPENAI_BASE_URL=" + srv.URL(),
		"OPENAI_API_KEY=sk-docs-test",
		"TRACT_MODEL=llama3.2",
	}
	type fix struct {
		first, end int
		got        string
	}
	var fixes []fix
	for _, s := range steps {
		switch {
		case s.isReply && s.callName != "":
			srv.Reply(llmtest.Calls(llmtest.Call(s.callName, s.reply)))
		case s.isReply && s.match == "":
			srv.Reply(llmtest.Answer(s.reply))
		case s.isReply:
			srv.When(s.match, llmtest.Answer(s.reply))
		case strings.HasPrefix(s.command, "export "):
			assert.Empty(t, s.want, "%s:%d: an export line prints nothing", page, s.line)
		default:
			got := runDocCommand(t, dir, env, s.command)
			if !outputPattern(s.want).MatchString(got) {
				if *updateDocs {
					fixes = append(fixes, fix{s.first, s.end, got})
					continue
				}
				want := strings.Join(s.want, "\n")
				if want != "" {
					want += "\n"
				}
				assert.Equal(t, want, got, "%s:%d: $ %s\n(go test ./tests -run TestDocs_Examples -update-docs rewrites it)", page, s.line, s.command)
			}
		}
	}
	if len(fixes) == 0 {
		return
	}
	lines := strings.Split(string(data), "\n")
	for i := len(fixes) - 1; i >= 0; i-- {
		f := fixes[i]
		got := strings.Split(strings.TrimSuffix(f.got, "\n"), "\n")
		if f.got == "" {
			got = nil
		}
		lines = slices.Concat(lines[:f.first], got, lines[f.end:])
	}
	require.NoError(t, os.WriteFile(page, []byte(strings.Join(lines, "\n")), 0o644))
	t.Logf("%s: rewrote the output of %d examples", page, len(fixes))
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdCode    = regexp.MustCompile("(?s)```.*?```|`[^`]*`")
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// headingAnchors returns the anchors GitHub gives the headings of a page.
func headingAnchors(data []byte) map[string]bool {
	anchors := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(string(data), -1) {
		slug := slugDrop.ReplaceAllString(strings.ToLower(strings.TrimSpace(m[1])), "")
		anchors[strings.ReplaceAll(slug, " ", "-")] = true
	}
	return anchors
}

// Every relative link of the README and docs/ leads to a file that
// exists and, with an anchor, to one of its headings: pages moved and
// sections renamed cannot leave a link behind.
func TestDocs_LinksResolve(t *testing.T) {
	t.Parallel()
	for _, page := range docsPages(t) {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range mdLink.FindAllStringSubmatch(mdCode.ReplaceAllString(string(data), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			linked, err := os.ReadFile(path)
			if info, serr := os.Stat(path); serr == nil && info.IsDir() {
				continue
			}
			if !assert.NoError(t, err, "%s links to %s, which does not exist", page, target) || anchor == "" {
				continue
			}
			assert.True(t, headingAnchors(linked)[anchor], "%s links to %s: %s has no heading with that anchor", page, target, path)
		}
	}
}
