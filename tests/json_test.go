package tests

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// jsonOutput is one command's --json output, and the record of
// docs/json.md that documents it.
type jsonOutput struct {
	// args ran the command.
	args []string
	// record is the heading of docs/json.md's section for the record the
	// output holds.
	record string
	// shape is how the output holds records: "object" (one), "array" (a
	// JSON array of them) or "lines" (one per line, JSON lines).
	shape string
	out   string
}

// jsonOutputs runs every command that prints data with --json on a
// repository with a validated turn that took a retry, and returns what
// each printed.
func jsonOutputs(t *testing.T) []jsonOutput {
	t.Helper()
	srv := retryServer(t)
	s := chatEnv(newSandbox(t), srv)
	var outs []jsonOutput
	run := func(record, shape string, args ...string) result {
		t.Helper()
		r := s.ok(args...)
		outs = append(outs, jsonOutput{args: args, record: record, shape: shape, out: r.Stdout})
		return r
	}
	run("init", "object", "init", "--json")
	run("commit record", "object", "commit", "--role", "system", "-m", "Answer in JSON.", "--json")
	run("import", "object", "import", "--json", s.writeFile("in.jsonl", `{"role":"user","content":"hello"}`+"\n"+`{"role":"assistant","content":"hi"}`))
	run("import --format openai", "object", "import", "--format", "openai", "--json",
		s.writeFile("conversations.jsonl", `{"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`+"\n"))
	run("chat", "object", "chat", "--validate", "json", "--task", "t1", "--json", "List colours")
	run("commit record", "object", "show", "--json")
	run("status record", "object", "status", "--json")
	run("branch", "array", "branch", "--json")
	run("status record", "object", "switch", "-c", "side", "--json")
	run("status record", "object", "checkout", "main", "--json")
	run("reflog", "array", "reflog", "--json")
	run("log", "object", "log", "--json")
	run("log", "object", "log", "--all", "--json")
	run("log", "object", "log", "--all", "--json", "--grep", "colours")
	run("search", "object", "search", "--json", "colours")
	run("compile", "array", "compile", "--json")
	run("events", "lines", "events", "--json")
	run("stats", "object", "stats", "--json")
	run("compress --dry-run", "object", "compress", "--dry-run", "--keep-last", "2", "--json")
	run("compress", "object", "compress", "--keep-last", "2", "--content", "Greetings.", "--json")
	run("reset", "object", "reset", "HEAD~1", "--json")
	run("gc", "object", "gc", "--expire", "now", "--json")
	run("fsck", "object", "fsck", "--json")
	if !onPostgres() { // file-only commands
		run("fsck --salvage", "object", "fsck", "--salvage", filepath.Join(s.dir, "salvaged.db"), "--json")
		run("compact", "object", "compact", "--json")
	}
	run("copy", "object", "copy", s.dbPath(), filepath.Join(s.dir, "copied.db"), "--json")
	run("version", "object", "version", "--json")
	s = s.withEnv("TRACT_CONFIG", filepath.Join(s.dir, "config.json"))
	s.ok("config", "set", "model", "m")
	run("config list", "object", "config", "list", "--json")
	srv.Models("m-1", "m-2")
	run("models", "array", "models", "--json")
	// A turn whose escalation waits in the repository, on a branch of its
	// own.
	s.ok("switch", "-c", "escalated")
	srv.Reply(llmtest.Answer("not JSON"))
	requireExit(t, s.tract("chat", "--validate", "json", "--max-attempts", "1", "--on-exhausted", "exit", "Say something"), exitWaiting)
	r := run("escalations", "array", "escalations", "--json")
	var es []struct {
		ID string `json:"id"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &es))
	require.Len(t, es, 1)
	run("escalations", "object", "escalation", "show", es[0].ID, "--json")
	run("escalations", "object", "escalation", "answer", es[0].ID, "fix", "answer in JSON", "--json")
	return outs
}

// docRecords reads docs/json.md: for each record's heading ("### NAME"),
// its top-level fields (the rows of its table whose field has no "." or
// "[]") and which of them are optional (their meaning starts with
// "Optional").
func docRecords(t *testing.T) map[string]map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "json.md"))
	require.NoError(t, err)
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z_]+)` \\| [^|]+ \\| (.*) \\|$")
	records := map[string]map[string]bool{}
	var cur map[string]bool
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "### "):
			name := strings.Trim(strings.TrimPrefix(line, "### "), "`")
			cur = map[string]bool{}
			records[name] = cur
		case strings.HasPrefix(line, "## "):
			cur = nil
		case cur != nil:
			if m := row.FindStringSubmatch(line); m != nil {
				cur[m[1]] = strings.HasPrefix(m[2], "Optional")
			}
		}
	}
	require.NoError(t, sc.Err())
	return records
}

// records decodes an output into its records.
func (o jsonOutput) records(t *testing.T) []map[string]any {
	t.Helper()
	var recs []map[string]any
	switch o.shape {
	case "object":
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(o.out), &m), "%v: %s", o.args, o.out)
		recs = append(recs, m)
	case "array":
		require.NoError(t, json.Unmarshal([]byte(o.out), &recs), "%v: %s", o.args, o.out)
	case "lines":
		for _, l := range lines(o.out) {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), "%v: %s", o.args, l)
			recs = append(recs, m)
		}
	}
	return recs
}

// nulls returns the paths in v that hold null.
func nulls(path string, v any) []string {
	switch v := v.(type) {
	case nil:
		return []string{path}
	case map[string]any:
		var out []string
		for k, e := range v {
			out = append(out, nulls(path+"."+k, e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range v {
			out = append(out, nulls(path+"[]", e)...)
		}
		return out
	}
	return nil
}

// Every command's --json output parses, holds no null (an empty list is
// [], an absent optional field is left out), and has exactly the
// top-level fields docs/json.md lists for its record, so the document
// cannot drift from the output.
func TestJSON_EveryCommandMatchesTheDocument(t *testing.T) {
	t.Parallel()
	docs := docRecords(t)
	outputs := jsonOutputs(t)

	// Every section of the document is checked against an output here,
	// but for those checked elsewhere: a section documented but never
	// printed here would drift unseen.
	elsewhere := map[string]string{"migrate": "TestPostgres_MigrateJSONMatchesTheDocument"}
	if onPostgres() {
		elsewhere["fsck --salvage"], elsewhere["compact"] = "the file backend's run", "the file backend's run"
	}
	run := map[string]bool{}
	for _, o := range outputs {
		run[o.record] = true
	}
	for record := range docs {
		if _, ok := elsewhere[record]; !ok {
			assert.True(t, run[record], "docs/json.md's section %q is checked against no command's output: add its command to jsonOutputs", record)
		}
	}

	for _, o := range outputs {
		t.Run(strings.Join(o.args[:1], " ")+" "+o.record, func(t *testing.T) {
			fields, ok := docs[o.record]
			require.True(t, ok, "docs/json.md has no section %q for %v", o.record, o.args)
			recs := o.records(t)
			if o.shape != "object" {
				require.NotEmpty(t, recs, "%v printed no record to check", o.args)
			}
			for _, rec := range recs {
				assert.Empty(t, nulls("", rec), "%v prints null: %s", o.args, o.out)
				var got, missing []string
				for k := range rec {
					got = append(got, k)
					_, documented := fields[k]
					assert.True(t, documented, "%v prints %q, which docs/json.md does not list under %q", o.args, k, o.record)
				}
				for k, optional := range fields {
					if !optional && !slices.Contains(got, k) {
						missing = append(missing, k)
					}
				}
				sort.Strings(missing)
				assert.Empty(t, missing, "%v lacks fields docs/json.md lists under %q: %s", o.args, o.record, o.out)
			}
		})
	}
}

// chat --json names the failed attempts' commits and the steering
// commits, on success and on failure, and its lists are [] when a turn
// made no attempt.
func TestJSON_ChatNamesFailedAttemptsAndSteering(t *testing.T) {
	t.Parallel()
	type record struct {
		History []struct {
			OK     bool   `json:"ok"`
			Commit string `json:"commit"`
		} `json:"history"`
		Steering       []string `json:"steering"`
		FailedAttempts []string `json:"failed_attempts"`
		Error          string   `json:"error"`
	}
	cases := []struct {
		name     string
		reply    llmtest.Reply
		code     int
		failed   int
		steering int
	}{
		{"exhausted", llmtest.Answer(badJSON), exitExhausted, 3, 2},
		{"model failure", llmtest.Error(500, "down"), exitModel, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(t, llmtest.WithoutVerify())
			srv.Otherwise(tc.reply)
			s := chatEnv(newSandbox(t), srv)
			s.initRepo()
			r := s.tract("chat", "--validate", "json", "--json", "List colours")
			requireExit(t, r, tc.code)
			var raw map[string]any
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &raw), r.String())
			assert.Empty(t, nulls("", raw), r.Stdout)
			rec := decodeJSON[record](t, r)
			assert.NotEmpty(t, rec.Error)
			require.Len(t, rec.FailedAttempts, tc.failed)
			require.Len(t, rec.Steering, tc.steering)
			for i, h := range rec.FailedAttempts {
				assert.False(t, rec.History[i].OK)
				assert.Equal(t, rec.History[i].Commit, h)
				c := decodeJSON[commitInfo](t, s.ok("show", h, "--json"))
				assert.Equal(t, badJSON, c.Text)
			}
			for _, h := range rec.Steering {
				c := decodeJSON[commitInfo](t, s.ok("show", h, "--json"))
				assert.Equal(t, "steering", c.Kind)
			}
		})
	}

	// After a retry that succeeded, the failed attempt is an orphan the
	// record still names.
	s := chatEnv(newSandbox(t), retryServer(t))
	s.initRepo()
	rec := decodeJSON[record](t, s.ok("chat", "--validate", "json", "--json", "List colours"))
	require.Len(t, rec.FailedAttempts, 1)
	require.Len(t, rec.Steering, 1)
	all := s.logAll()
	require.Len(t, all.Orphans, 1)
	var orphans []string
	for _, c := range all.Orphans[0].Commits {
		orphans = append(orphans, c.Hash)
	}
	assert.Contains(t, orphans, rec.FailedAttempts[0])
	assert.Contains(t, orphans, rec.Steering[0])
}
