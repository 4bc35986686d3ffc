package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/api"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/store/postgres/pgtest"
)

// backends runs fn once per backend: a file, and PostgreSQL (skipped
// without a test database, failed under CI=true; see pgtest.URL). open
// creates a repository and returns its location.
func backends(t *testing.T, fn func(t *testing.T, location string)) {
	t.Run("file", func(t *testing.T) {
		fn(t, filepath.Join(t.TempDir(), "tract.db"))
	})
	t.Run("postgres", func(t *testing.T) {
		fn(t, pgtest.RepositoryURL(t, pgtest.URL(t)))
	})
}

// fixture is a repository with what every route has to show: a
// validated turn purified after a failed attempt (an orphan chain with a
// failure), a second branch, and an escalation that waits.
type fixture struct {
	t        *tract.Tract
	srv      *httptest.Server
	accepted tract.Hash // the accepted answer of the purified turn
	failed   tract.Hash // its failed attempt, an orphan
	esc      string     // the escalation's id
}

func newFixture(t *testing.T, location string, opts ...api.Option) *fixture {
	t.Helper()
	client := llm.NewScripted(llm.Reply{Content: "Sure! {name: Ada}"}).
		When("failed validation", llm.Reply{Content: `{"name": "Ada"}`}).
		When("numbers", llm.Reply{Content: "one, two, three"})
	tr, err := tract.Init(location, tract.WithClient(client))
	require.NoError(t, err)
	t.Cleanup(func() { tr.Close() })
	ctx := context.Background()
	f := &fixture{t: tr}
	_, err = tr.System(ctx, "You answer in JSON.")
	require.NoError(t, err)
	res, err := tr.Chat(ctx, "Describe Ada as JSON.", tract.Validate(retry.JSON()))
	require.NoError(t, err)
	require.Len(t, res.History, 2)
	require.False(t, res.History[0].OK)
	f.accepted, f.failed = res.Commit, res.History[0].Commit
	_, err = tr.CreateBranch(ctx, "side", "HEAD~1")
	require.NoError(t, err)
	_, err = tr.OnBranch("side").User(ctx, "A question on the side.\nSecond line.")
	require.NoError(t, err)
	_, err = tr.Chat(ctx, "List three numbers as JSON.", tract.Validate(retry.JSON()), tract.MaxAttempts(1),
		tract.Task("nightly-1"), tract.EscalateWait(tract.ExitWhenEscalated()))
	require.True(t, errors.Is(err, tract.ErrWaiting), "%v", err)
	es, err := tr.Escalations(ctx)
	require.NoError(t, err)
	require.Len(t, es, 1)
	f.esc = es[0].ID
	s := api.New(tr, append([]api.Option{api.WithPollInterval(20 * time.Millisecond)}, opts...)...)
	f.srv = httptest.NewServer(s)
	t.Cleanup(func() {
		s.Close()
		f.srv.Close()
	})
	return f
}

// get answers GET path; body is the response's body.
func (f *fixture) do(t *testing.T, method, path, body string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// same asserts that got is the JSON of want.
func same(t *testing.T, want any, got []byte) {
	t.Helper()
	w, err := json.Marshal(want)
	require.NoError(t, err)
	assert.JSONEq(t, string(w), string(got))
}

// Every route answers with the CLI's --json shapes, and every bad input
// with a 4xx and an error object that says what to pass.
func TestRoutes(t *testing.T) {
	backends(t, func(t *testing.T, location string) {
		f := newFixture(t, location)
		ctx := context.Background()
		tr := f.t
		status, err := tr.Status(ctx)
		require.NoError(t, err)
		branches, err := tr.Branches(ctx)
		require.NoError(t, err)
		head, err := tr.Show(ctx, "HEAD")
		require.NoError(t, err)
		log, err := tr.Log(ctx)
		require.NoError(t, err)
		all, err := tr.LogAll(ctx)
		require.NoError(t, err)
		msgs, err := tr.Compile(ctx)
		require.NoError(t, err)
		reflog, err := tr.Reflog(ctx, "main")
		require.NoError(t, err)
		evs, err := tr.Events(ctx, tract.EventFilter{})
		require.NoError(t, err)
		nightly, err := tr.Events(ctx, tract.EventFilter{Task: "nightly-1"})
		require.NoError(t, err)
		require.NotEmpty(t, nightly)
		require.Less(t, len(nightly), len(evs))
		stats, err := tr.Stats(ctx, tract.StatsFilter{})
		require.NoError(t, err)
		escs, err := tr.Escalations(ctx)
		require.NoError(t, err)

		for _, tc := range []struct {
			name, path string
			status     int
			want       any    // the JSON the body must equal
			code       string // the error's code
			contains   string // a part of the body
		}{
			{name: "status", path: "/api/status", status: 200, want: status},
			{name: "branches", path: "/api/branches", status: 200, want: branches},
			{name: "log", path: "/api/log", status: 200, want: tract.History{Commits: log, Orphans: []*tract.OrphanChain{}}},
			{name: "log --all", path: "/api/log?all=1", status: 200, want: all},
			{name: "log of a revision", path: "/api/log?rev=side&limit=1", status: 200, contains: `"next":"`},
			{name: "show HEAD", path: "/api/commits/HEAD", status: 200, want: head},
			{name: "show a short hash", path: "/api/commits/" + head.Hash.String()[:8], status: 200, want: head},
			{name: "show a branch's parent", path: "/api/commits/side~1", status: 200, contains: `"hash":"`},
			{name: "compile", path: "/api/compile", status: 200, want: msgs},
			{name: "reflog", path: "/api/reflog?ref=main", status: 200, want: reflog},
			{name: "events", path: "/api/events", status: 200, want: evs},
			{name: "events of a task", path: "/api/events?task=nightly-1", status: 200, want: nightly},
			{name: "events since a time", path: "/api/events?since=" + url.QueryEscape(evs[len(evs)-1].Timestamp.Format(time.RFC3339Nano)), status: 200,
				want: lastEvents(evs)},
			{name: "stats", path: "/api/stats", status: 200, want: stats},
			{name: "escalations", path: "/api/escalations", status: 200, want: escs},
			{name: "escalation", path: "/api/escalations/" + f.esc, status: 200, want: escs[0]},
			{name: "search", path: "/api/search?q=ada", status: 200, contains: `"query":"ada"`},
			{name: "export", path: "/api/export", status: 200, contains: `"messages"`},
			{name: "diff", path: "/api/diff?a=" + f.failed.String() + "&b=" + f.accepted.String(), status: 200, contains: `"op":"-","text":"Sure! {name: Ada}"`},
			{name: "diff beside the accepted answer", path: "/api/diff?a=" + f.failed.String(), status: 200,
				contains: `"op":"+","text":"{\"name\": \"Ada\"}"`},

			{name: "unknown route", path: "/api/nope", status: 404, code: "not_found", contains: "/api/status"},
			{name: "unknown commit", path: "/api/commits/0123abcd", status: 404, code: "unknown_revision"},
			{name: "unknown branch", path: "/api/log?rev=nosuch", status: 404, code: "unknown_revision"},
			{name: "bad revision", path: "/api/commits/" + url.PathEscape("main@{yesterday}"), status: 400, code: "bad_revision", contains: "give a hash"},
			{name: "bad revision of compile", path: "/api/compile?rev=" + url.QueryEscape("main@{-1}"), status: 400, code: "bad_revision"},
			{name: "limit 0", path: "/api/log?limit=0", status: 400, code: "bad_limit", contains: "from 1 to 1000"},
			{name: "limit too high", path: "/api/graph?limit=1001", status: 400, code: "bad_limit"},
			{name: "limit not a number", path: "/api/reflog?limit=ten", status: 400, code: "bad_limit"},
			{name: "bad cursor", path: "/api/log?all=1&cursor=xyz", status: 400, code: "bad_cursor", contains: "next"},
			{name: "stale cursor", path: "/api/graph?cursor=" + strings.Repeat("ab", 32), status: 400, code: "bad_cursor", contains: "start again"},
			{name: "bad offset cursor", path: "/api/events?cursor=-1", status: 400, code: "bad_cursor"},
			{name: "all with a revision", path: "/api/log?all=1&rev=main", status: 400, code: "bad_request"},
			{name: "all not a flag", path: "/api/log?all=maybe", status: 400, code: "bad_request"},
			{name: "unknown reflog", path: "/api/reflog?ref=nosuch", status: 404, code: "not_found"},
			{name: "empty search", path: "/api/search?q=", status: 400, code: "bad_request", contains: "no word"},
			{name: "bad export format", path: "/api/export?format=csv", status: 400, code: "bad_request", contains: "openai"},
			{name: "bad since", path: "/api/stats?since=yesterday", status: 400, code: "bad_request", contains: "RFC 3339"},
			{name: "unknown escalation", path: "/api/escalations/zzzzzzzz", status: 404, code: "not_found"},
			{name: "diff without a", path: "/api/diff", status: 400, code: "bad_revision"},
			{name: "diff of a reachable commit alone", path: "/api/diff?a=HEAD", status: 400, code: "bad_request", contains: "give b=REV"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := f.do(t, "GET", tc.path, "")
				require.Equal(t, tc.status, resp.StatusCode, "%s", body)
				if tc.path != "/api/export" {
					assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
				}
				if tc.want != nil {
					same(t, tc.want, body)
				}
				if tc.code != "" {
					var doc struct {
						Error struct{ Message, Code string }
					}
					require.NoError(t, json.Unmarshal(body, &doc), "%s", body)
					assert.Equal(t, tc.code, doc.Error.Code)
					assert.NotEmpty(t, doc.Error.Message)
				}
				assert.Contains(t, string(body), tc.contains)
			})
		}
	})
}

func TestMethods(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "tract.db"))
	for _, tc := range []struct{ method, path, allow string }{
		{"POST", "/api/status", "GET, HEAD"},
		{"DELETE", "/api/commits/HEAD", "GET, HEAD"},
		{"GET", "/api/escalations/" + f.esc + "/answer", "POST"},
	} {
		resp, body := f.do(t, tc.method, tc.path, "")
		assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, "%s %s", tc.method, tc.path)
		assert.Equal(t, tc.allow, resp.Header.Get("Allow"))
		assert.Contains(t, string(body), `"code":"method_not_allowed"`)
	}
}

// Answering an escalation: bad bodies refused with what to send, the
// first answer taken, a second refused with 409 naming the first.
func TestAnswer(t *testing.T) {
	backends(t, func(t *testing.T, location string) {
		f := newFixture(t, location, api.WithMaxBodySize(256))
		path := "/api/escalations/" + f.esc + "/answer"
		for _, tc := range []struct {
			name, body string
			status     int
			code       string
		}{
			{"not JSON", "retry", 400, "bad_request"},
			{"unknown field", `{"action":"retry","why":"x"}`, 400, "bad_request"},
			{"unknown action", `{"action":"later"}`, 400, "bad_request"},
			{"fix without text", `{"action":"fix"}`, 400, "bad_request"},
			{"text without fix", `{"action":"retry","text":"x"}`, 400, "bad_request"},
			{"two values", `{"action":"retry"}{"action":"skip"}`, 400, "bad_request"},
			{"too large", `{"action":"fix","text":"` + strings.Repeat("x", 300) + `"}`, 413, "too_large"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				resp, body := f.do(t, "POST", path, tc.body, "Content-Type", "application/json")
				assert.Equal(t, tc.status, resp.StatusCode, "%s", body)
				assert.Contains(t, string(body), `"code":"`+tc.code+`"`)
			})
		}
		e, err := f.t.EscalationByID(context.Background(), f.esc)
		require.NoError(t, err)
		require.Nil(t, e.Answer, "no refused answer was recorded")

		resp, body := f.do(t, "POST", path, `{"action":"fix","text":"use integers","by":"ann"}`, "Content-Type", "application/json")
		require.Equal(t, 200, resp.StatusCode, "%s", body)
		var got tract.PendingEscalation
		require.NoError(t, json.Unmarshal(body, &got))
		require.NotNil(t, got.Answer)
		assert.Equal(t, "use integers", got.Answer.Instruction)
		assert.Equal(t, "ann", got.Answer.By)

		resp, body = f.do(t, "POST", path, `{"action":"skip","by":"bob"}`, "Content-Type", "application/json")
		assert.Equal(t, http.StatusConflict, resp.StatusCode, "%s", body)
		var doc struct {
			Error struct {
				Code, Message string
				Answer        tract.EscalationAnswer
			}
		}
		require.NoError(t, json.Unmarshal(body, &doc))
		assert.Equal(t, "answered", doc.Error.Code)
		assert.Contains(t, doc.Error.Message, "ann")
		assert.Equal(t, "ann", doc.Error.Answer.By)

		resp, _ = f.do(t, "POST", "/api/escalations/zzzzzzzz/answer", `{"action":"retry"}`, "Content-Type", "application/json")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	})
}

// Walking the pages of log, log --all, the graph, reflog and events
// gives what one read of the whole gives, in the same order.
func TestPagination(t *testing.T) {
	backends(t, func(t *testing.T, location string) {
		f := newFixture(t, location)
		ctx := context.Background()

		var hist tract.History
		cursor := ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 50)
			_, body := f.do(t, "GET", "/api/log?all=1&limit=2&cursor="+cursor, "")
			var page struct {
				tract.History
				Next string
			}
			require.NoError(t, json.Unmarshal(body, &page), "%s", body)
			assert.LessOrEqual(t, len(page.Commits)+chainLen(page.Orphans), 2)
			hist.Commits = append(hist.Commits, page.Commits...)
			for i, ch := range page.Orphans {
				// A chain cut by a page's end goes on at the top of the
				// next: its commits follow first parents across the cut.
				if n := len(hist.Orphans); i == 0 && n > 0 {
					prev := hist.Orphans[n-1]
					last := prev.Commits[len(prev.Commits)-1]
					if prev.Fork == ch.Fork && prev.Reason == ch.Reason && len(last.Parents) > 0 && last.Parents[0] == ch.Commits[0].Hash {
						prev.Commits = append(prev.Commits, ch.Commits...)
						continue
					}
				}
				hist.Orphans = append(hist.Orphans, ch)
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		all, err := f.t.LogAll(ctx)
		require.NoError(t, err)
		if hist.Orphans == nil {
			hist.Orphans = []*tract.OrphanChain{}
		}
		wantJSON, _ := json.Marshal(all)
		gotJSON, _ := json.Marshal(hist)
		assert.JSONEq(t, string(wantJSON), string(gotJSON))

		var log []tract.Hash
		cursor = ""
		for {
			_, body := f.do(t, "GET", "/api/log?limit=1&cursor="+cursor, "")
			var page struct {
				Commits []tract.CommitInfo
				Next    string
			}
			require.NoError(t, json.Unmarshal(body, &page))
			require.Len(t, page.Commits, 1)
			log = append(log, page.Commits[0].Hash)
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		want, err := f.t.Log(ctx)
		require.NoError(t, err)
		require.Len(t, log, len(want))
		for i := range want {
			assert.Equal(t, want[i].Hash, log[i])
		}

		o, err := f.t.Outline(ctx)
		require.NoError(t, err)
		topo := o.Topo()
		var rows []api.GraphRow
		cursor = ""
		for {
			_, body := f.do(t, "GET", "/api/graph?limit=3&cursor="+cursor, "")
			var page struct {
				Rows  []api.GraphRow
				Total int
				Next  string
			}
			require.NoError(t, json.Unmarshal(body, &page))
			assert.Equal(t, len(topo), page.Total)
			rows = append(rows, page.Rows...)
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		require.Len(t, rows, len(topo))
		var l tract.Lanes
		for i, tc := range topo {
			lr := l.Next(tc.LaneCommit)
			assert.Equal(t, tc.Hash, rows[i].Hash)
			assert.Equal(t, lr.Lane, rows[i].Lane, "row %d", i)
			assert.Equal(t, lr.Above, rows[i].Columns, "row %d", i)
			if lr.Edges == nil {
				lr.Edges = []tract.LaneEdge{}
			}
			assert.Equal(t, lr.Edges, rows[i].Lanes, "row %d", i)
			assert.Equal(t, tc.Orphan, rows[i].Orphan)
			assert.Equal(t, tc.Note(), rows[i].Note)
			if tc.Hash == f.failed {
				assert.True(t, rows[i].Failure)
				assert.Contains(t, rows[i].Diagnosis, "invalid")
				assert.NotEmpty(t, rows[i].Fork)
			}
		}

		reflog, err := f.t.Reflog(ctx, "HEAD")
		require.NoError(t, err)
		var entries []tract.ReflogEntry
		next := "/api/reflog?limit=2"
		for next != "" {
			resp, body := f.do(t, "GET", next, "")
			var page []tract.ReflogEntry
			require.NoError(t, json.Unmarshal(body, &page))
			entries = append(entries, page...)
			next = ""
			if c := resp.Header.Get(api.HeaderNext); c != "" {
				next = "/api/reflog?limit=2&cursor=" + c
				assert.Contains(t, resp.Header.Get("Link"), `rel="next"`)
			}
		}
		same(t, reflog, mustJSON(t, entries))
	})
}

func chainLen(chs []*tract.OrphanChain) int {
	n := 0
	for _, ch := range chs {
		n += len(ch.Commits)
	}
	return n
}

func mustJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// helperEnv makes the test binary a second process that writes to the
// repository: TestHelperProcess.
const helperEnv = "TRACT_API_TEST_HELPER"

// TestMain makes the test binary, run with helperEnv set, the other
// process of TestLive: it commits a message to the repository the
// variable names, and exits.
func TestMain(m *testing.M) {
	if location := os.Getenv(helperEnv); location != "" {
		if err := commitFromHelper(location); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func commitFromHelper(location string) error {
	tr, err := tract.Open(location)
	if err != nil {
		return err
	}
	defer tr.Close()
	_, err = tr.User(context.Background(), "from another process")
	return err
}

// sseEvent is one event of a stream.
type sseEvent struct{ name, data string }

// readEvents sends the events of the stream r to the channel until it
// ends.
func readEvents(r io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			case strings.HasPrefix(line, ":"):
				out <- sseEvent{name: "comment", data: line}
			}
		}
	}()
	return out
}

// next waits for the next event named name.
func next(t *testing.T, evs <-chan sseEvent, name string, match func(string) bool) string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-evs:
			require.True(t, ok, "the stream ended before a %s event", name)
			if ev.name == name && (match == nil || match(ev.data)) {
				return ev.data
			}
		case <-deadline:
			t.Fatalf("no %s event in 10 s", name)
		}
	}
}

// The live stream reports a ref moved by another process, an escalation
// answered through the API, and heartbeats; and ends when the Server
// closes.
func TestLive(t *testing.T) {
	backends(t, func(t *testing.T, location string) {
		f := newFixture(t, location, api.WithHeartbeat(50*time.Millisecond))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/live", nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		evs := readEvents(resp.Body)
		next(t, evs, "comment", func(s string) bool { return strings.Contains(s, "heartbeat") })
		// The poller has read the refs once by now (it reads before its first wait).
		time.Sleep(60 * time.Millisecond)

		_, before, err := f.t.Head(context.Background())
		require.NoError(t, err)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"="+location)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		_, after, err := f.t.Head(context.Background())
		require.NoError(t, err)
		require.NotEqual(t, before, after)

		data := next(t, evs, "ref", func(s string) bool { return strings.Contains(s, `"refs/heads/main"`) })
		var ev api.RefEvent
		require.NoError(t, json.Unmarshal([]byte(data), &ev))
		assert.Equal(t, before, ev.Old)
		assert.Equal(t, after, ev.New)

		r, body := f.do(t, "POST", "/api/escalations/"+f.esc+"/answer", `{"action":"retry"}`, "Content-Type", "application/json")
		require.Equal(t, 200, r.StatusCode, "%s", body)
		data = next(t, evs, "escalation", nil)
		var eev api.EscalationEvent
		require.NoError(t, json.Unmarshal([]byte(data), &eev))
		assert.Equal(t, f.esc, eev.ID)
		assert.Equal(t, "answered", eev.State)
		require.NotNil(t, eev.Answer)

		// An escalation raised by a turn of this process (not through the
		// API) is seen by the poller too.
		_, err = f.t.Chat(context.Background(), "List three numbers as JSON, again.", tract.Validate(retry.JSON()),
			tract.MaxAttempts(1), tract.EscalateWait(tract.ExitWhenEscalated()))
		require.True(t, errors.Is(err, tract.ErrWaiting), "%v", err)
		data = next(t, evs, "escalation", func(s string) bool { return strings.Contains(s, `"state":"pending"`) })
		require.NoError(t, json.Unmarshal([]byte(data), &eev))
		assert.NotEqual(t, f.esc, eev.ID)

		f.srv.Config.Handler.(*api.Server).Close()
		for range evs {
			// drained: the stream ended
		}
	})
}

// lastEvents returns the events at the time of the last one.
func lastEvents(evs []tract.Event) []tract.Event {
	at := evs[len(evs)-1].Timestamp
	var out []tract.Event
	for _, e := range evs {
		if !e.Timestamp.Before(at) {
			out = append(out, e)
		}
	}
	return out
}

// The outline kept for log --all and the graph is read again when a ref
// moves, and when gc deleted commits of it (which moves no ref).
func TestOutline_Refreshes(t *testing.T) {
	f := newFixture(t, filepath.Join(t.TempDir(), "tract.db"))
	ctx := context.Background()
	total := func() int {
		_, body := f.do(t, "GET", "/api/graph?limit=1000", "")
		var page struct{ Total int }
		require.NoError(t, json.Unmarshal(body, &page), "%s", body)
		return page.Total
	}
	n := total()
	_, err := f.t.User(ctx, "one more")
	require.NoError(t, err)
	assert.Equal(t, n+1, total())

	removed, err := f.t.GC(ctx, tract.GCExpiry(0))
	require.NoError(t, err)
	require.Positive(t, removed.Commits)
	resp, body := f.do(t, "GET", "/api/log?all=1&limit=1000", "")
	require.Equal(t, 200, resp.StatusCode, "%s", body)
	all, err := f.t.LogAll(ctx)
	require.NoError(t, err)
	same(t, all, body)
	assert.Equal(t, n+1-removed.Commits, total())
}
