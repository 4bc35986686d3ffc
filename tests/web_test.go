package tests

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/llm/llmtest"
)

// updateScreenshots rewrites the screenshots of the web view in docs/:
//
//	go test ./tests/ -run TestWeb_Screenshots -update-screenshots
var updateScreenshots = flag.Bool("update-screenshots", false, "rewrite docs/web-graph.png and docs/web-diff.png")

// maxScreenshot is the largest a screenshot in docs/ may be.
const maxScreenshot = 200 << 10

// chromium finds the browser the web view's tests drive: Debian's
// chromium (which .ci/run installs), or another Chromium or Chrome on
// the PATH. Without one the test is skipped, except under CI=true, where
// it fails.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium on the PATH: .ci/run installs Debian's chromium for the web view's tests")
	}
	t.Skip("no Chromium on the PATH (install Debian's chromium to run the web view's tests)")
	return ""
}

// browser is a headless Chromium driven over the DevTools protocol, with
// the page's console errors and uncaught exceptions collected: a web
// view test fails on any (a script error, a Content-Security-Policy
// refusal, a failed request).
type browser struct {
	ctx     context.Context
	mu      sync.Mutex // guards errors and allowed
	errors  []string
	allowed []string
}

// newBrowser starts Chromium for t, with a fresh profile, and stops it
// when t ends. Start the server first: the browser stops before it,
// and a stream the server cuts off would be an error in the page.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Headless,
		chromedp.NoSandbox, // root in a container has no sandbox to drop into
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 760),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	b := &browser{ctx: ctx}
	// The browser lives as long as ctx: no timeout on this first call.
	require.NoError(t, chromedp.Do(ctx), "starting %s", chromium(t))
	messages := chromedp.Console(ctx)
	read := make(chan struct{})
	go func() {
		defer close(read)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.addError(fmt.Sprintf("%s (%s)", m, m.URL))
			}
		}
	}()
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		<-read
		b.mu.Lock()
		defer b.mu.Unlock()
		assert.Empty(t, b.errors, "the page reported errors")
	})
	return b
}

func (b *browser) addError(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, a := range b.allowed {
		if strings.Contains(s, a) {
			return
		}
	}
	b.errors = append(b.errors, s)
}

// allow makes the console errors that contain s expected ones.
func (b *browser) allow(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.allowed = append(b.allowed, s)
}

// do runs steps in the page, failing t on an error.
func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	b.doWithin(t, 30*time.Second, what, steps...)
}

// doWithin is do with another bound on the steps.
func (b *browser) doWithin(t *testing.T, d time.Duration, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, d)
	defer cancel()
	require.NoError(t, chromedp.Do(ctx, steps...), what)
}

// value runs an action that returns a value in the page.
func value[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err, what)
	return v
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, b *browser, js string) T {
	t.Helper()
	return value(t, b, js, chromedp.Evaluate[T](js))
}

// waitTrue waits until the JavaScript expression js is true in the page.
func waitTrue(js string) chromedp.Action[chromedp.Void] { return waitTrueWithin(20*time.Second, js) }

// waitTrueWithin is waitTrue with another bound on the wait.
func waitTrueWithin(d time.Duration, js string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(d), chromedp.WithPollingInterval(20*time.Millisecond))
}

// css selects the first element matching a CSS selector.
func css(format string, args ...any) chromedp.CSS { return chromedp.CSS(fmt.Sprintf(format, args...)) }

// webRepo is a repository for the web view: a turn whose first answer
// failed validation and whose second passed (purify hung the failed
// attempt and its steering beside the branch).
type webRepo struct {
	s        *sandbox
	srv      *llmtest.Server
	failed   string // the failed attempt's commit
	accepted string // the accepted answer's commit on the branch
}

func newWebRepo(t *testing.T) *webRepo {
	t.Helper()
	return newWebRepoAfter(t, 0)
}

// newWebRepoAfter is newWebRepo after bulk imported messages.
func newWebRepoAfter(t *testing.T, bulk int) *webRepo {
	t.Helper()
	srv := llmtest.NewServer(t)
	srv.Reply(llmtest.Answer("Sure! Here they are: {colours: [red, green, blue]}"),
		llmtest.Answer("{\n  \"colours\": [\"red\", \"green\", \"blue\"]\n}"))
	s := chatEnv(newSandbox(t), srv)
	s.initRepo()
	if bulk > 0 {
		s.importMessages(bulk, func(i int) string { return fmt.Sprintf("message %d of the bulk import", i) })
	}
	s.ok("commit", "--role", "system", "-m", "You answer in JSON.")
	r := s.ok("chat", "--json", "--task", "colours-1", "--validate", "json", "List three colours as JSON.")
	var res struct {
		Commit         string   `json:"commit"`
		FailedAttempts []string `json:"failed_attempts"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &res), r.String())
	require.Len(t, res.FailedAttempts, 1, r.String())
	w := &webRepo{s: s, srv: srv, failed: res.FailedAttempts[0], accepted: res.Commit}
	return w
}

// openView opens the web view at url and waits until its graph is drawn.
func openView(t *testing.T, b *browser, url string) {
	t.Helper()
	b.do(t, "open "+url, chromedp.Navigate(url),
		waitTrue(`document.body.hasAttribute('data-graph-drawn') && document.querySelectorAll('#graph svg circle').length > 0`))
}

// dotX is the x of a commit's dot in the graph's SVG (-1: not drawn).
func dotX(t *testing.T, b *browser, hash string) float64 {
	t.Helper()
	return eval[float64](t, b, fmt.Sprintf(
		`(() => { const c = document.querySelector('#graph svg circle[data-hash="%s"]'); return c ? +c.getAttribute('cx') : -1; })()`, hash))
}

// The graph of a repository with a purified retry hangs the failed
// attempt, dashed and red, in a column beside the branch; clicking it
// shows its diagnosis and the diff beside the accepted answer.
func TestWeb_FailedAttemptBesideTheBranch(t *testing.T) {
	t.Parallel()
	w := newWebRepo(t)
	_, addr := startServe(t, w.s)
	b := newBrowser(t)
	openView(t, b, "http://"+addr+"/")

	failedX, acceptedX := dotX(t, b, w.failed), dotX(t, b, w.accepted)
	require.GreaterOrEqual(t, acceptedX, 0.0, "the accepted answer is drawn")
	assert.Greater(t, failedX, acceptedX, "the failed attempt hangs beside the branch, to its right")
	cls := value(t, b, "the failed attempt's class", chromedp.AttributeValue(css(`#graph svg circle[data-hash="%s"]`, w.failed), "class"))
	assert.Contains(t, cls.Value, "failure")
	assert.Contains(t, cls.Value, "orphan")
	assert.True(t, eval[bool](t, b, `document.querySelectorAll('#graph svg path.edge.orphan').length > 0`), "the orphan chain's line is dashed")
	assert.Contains(t, value(t, b, "the row", chromedp.Text(css(`#graph .row[data-hash="%s"]`, w.failed))), "✗")

	b.do(t, "click the failed attempt",
		chromedp.Click(css(`#graph .row[data-hash="%s"]`, w.failed)),
		chromedp.WaitVisible(css(`#detail .diagnosis`)),
		chromedp.WaitVisible(css(`#detail [data-diff]`)))
	diag := value(t, b, "the diagnosis", chromedp.Text(css(`#detail .diagnosis`)))
	assert.Contains(t, diag, "invalid JSON")
	assert.Contains(t, diag, "verification_failed")
	diff := value(t, b, "the diff", chromedp.Text(css(`#detail [data-diff]`)))
	assert.Contains(t, diff, "Sure! Here they are")
	assert.Contains(t, diff, `"colours": ["red", "green", "blue"]`)
	assert.Equal(t, 1, eval[int](t, b, `document.querySelectorAll('#detail [data-diff] .line.del').length`), "the failed attempt's one line")
	assert.Equal(t, 3, eval[int](t, b, `document.querySelectorAll('#detail [data-diff] .line.add').length`), "the accepted answer's three lines")

	// The task's statistics: one task, retried, one failure type.
	b.do(t, "the statistics", chromedp.Click(css(`#show-stats`)), chromedp.WaitVisible(css(`#detail [data-stats]`)))
	stats := value(t, b, "the statistics", chromedp.Text(css(`#detail`)))
	for _, want := range []string{"tasks", "0.0%", "verification_failed", "colours-1", "success"} {
		assert.Contains(t, stats, want)
	}
	// One task's: a prefix no task has, then the task's row clicked.
	b.do(t, "no such task", chromedp.SendKeys(css(`[data-stats-filter] input`), "nothing\r"),
		waitTrue(`document.querySelector('#detail h3').textContent === 'Task statistics: nothing…'`))
	assert.NotContains(t, value(t, b, "no task's statistics", chromedp.Text(css(`#detail`))), "colours-1")
	b.do(t, "all tasks", chromedp.Click(css(`[data-stats-filter] button`)),
		waitTrue(`document.querySelector('#detail h3').textContent === 'Task statistics'`),
		chromedp.Click(css(`#detail tr.pick`)),
		waitTrue(`document.querySelector('#detail h3').textContent === 'Task statistics: colours-1…'`))
}

// A commit made by another process appears in the open page, without a
// reload; a commit's text is shown as text, never as markup.
func TestWeb_LiveCommitFromAnotherProcess(t *testing.T) {
	t.Parallel()
	w := newWebRepo(t)
	_, addr := startServe(t, w.s)
	b := newBrowser(t)
	openView(t, b, "http://"+addr+"/")
	b.do(t, "live", waitTrue(`document.getElementById('live').classList.contains('on')`))
	eval[int](t, b, `window.tractTestMark = 1`)

	const text = `<img src=x id=injected> from another process`
	hash := w.s.commit("user", text)
	b.do(t, "wait for the commit", waitTrue(fmt.Sprintf(`!!document.querySelector('#graph .row[data-hash="%s"]')`, hash)))
	assert.Equal(t, text, value(t, b, "the row", chromedp.Text(css(`#graph .row[data-hash="%s"] .text`, hash))))
	assert.Equal(t, 1, eval[int](t, b, `window.tractTestMark`), "the page was not reloaded")
	assert.False(t, eval[bool](t, b, `!!document.getElementById('injected')`), "the commit's text was parsed as HTML")
	// The branch's tip in the sidebar moved too.
	b.do(t, "the branch's tip", waitTrue(fmt.Sprintf(
		`[...document.querySelectorAll('#branches .hash')].some((e) => e.textContent === '%s')`, hash[:8])))

	// Search finds it, and opens it.
	b.do(t, "search", chromedp.SendKeys(css(`#search-q`), "another process\r"),
		chromedp.Click(css(`#detail [data-search] li[data-hash="%s"]`, hash)),
		chromedp.WaitVisible(css(`#detail pre[data-commit-text="%s"]`, hash)))
	assert.Equal(t, text, value(t, b, "the text", chromedp.Text(css(`#detail pre[data-commit-text="%s"]`, hash))))
	assert.Equal(t, 1, eval[int](t, b, `window.tractTestMark`), "the page was not reloaded")
}

// With a token, the page sends a browser without the cookie to the login
// form; the right token sets the cookie and the page then works, its
// live stream included.
func TestWeb_LoginWithToken(t *testing.T) {
	t.Parallel()
	w := newWebRepo(t)
	_, addr := startServe(t, w.s, "--token", "web-token-5150")
	b := newBrowser(t)
	b.allow("status of 401 (Unauthorized) (http://" + addr + "/login)") // the wrong token's answer
	b.do(t, "open the page", chromedp.Navigate("http://"+addr+"/"), chromedp.WaitVisible(css(`input[name=token]`)))
	assert.Contains(t, value(t, b, "the login URL", chromedp.Location()), "/login")
	b.do(t, "a wrong token", chromedp.SendKeys(css(`input[name=token]`), "wrong"),
		chromedp.Submit(css(`input[name=token]`)))
	b.do(t, "the form again", chromedp.WaitVisible(css(`[role=alert]`)))
	assert.Contains(t, value(t, b, "the message", chromedp.Text(css(`[role=alert]`))), "not this server's token")
	b.do(t, "log in", chromedp.SetValue(css(`input[name=token]`), "web-token-5150"),
		chromedp.Submit(css(`input[name=token]`)))
	b.do(t, "the graph", chromedp.WaitVisible(css(`#graph svg circle[data-hash="%s"]`, w.failed)))
	assert.Equal(t, "http://"+addr+"/", value(t, b, "the page's URL", chromedp.Location()))
	b.do(t, "live", waitTrue(`document.getElementById('live').classList.contains('on')`))
	hash := w.s.commit("user", "after the login")
	b.do(t, "a live commit", waitTrue(fmt.Sprintf(`!!document.querySelector('#graph .row[data-hash="%s"]')`, hash)))
}

// An escalation raised by another process appears in the open page, and
// is answered from it: the form's answer is the one the repository
// records.
func TestWeb_AnswerAnEscalation(t *testing.T) {
	t.Parallel()
	w := newWebRepo(t)
	_, addr := startServe(t, w.s)
	b := newBrowser(t)
	openView(t, b, "http://"+addr+"/")
	b.do(t, "live", waitTrue(`document.getElementById('live').classList.contains('on')`))

	w.srv.Reply(llmtest.Answer("no JSON today"))
	requireExit(t, w.s.tract("chat", "--task", "numbers-1", "--validate", "json", "--max-attempts", "1",
		"--on-exhausted", "exit", "List three numbers as JSON."), exitWaiting)
	id := awaitEscalation(t, w.s).ID
	sel := css(`#escalations [data-escalation="%s"]`, id)
	b.do(t, "the escalation, live", chromedp.WaitVisible(sel), waitTrue(`document.getElementById('esc-count').textContent === '1'`))
	b.do(t, "open it", chromedp.Click(sel), chromedp.WaitVisible(css(`form[data-escalation-form] select`)))
	question := value(t, b, "the question", chromedp.Text(css(`#detail`)))
	assert.Contains(t, question, "numbers-1")
	assert.Contains(t, question, "no JSON today")

	// A fix without its guidance is refused in the page, before any request.
	const form = `form[data-escalation-form] `
	b.do(t, "fix without text",
		chromedp.SetValue(css(form+`select`), "fix"),
		chromedp.Click(css(form+`button[type=submit]`)),
		chromedp.WaitVisible(css(form+`.msg-bad`)))
	assert.Equal(t, "pending", escalations(t, w.s)[0].State)

	b.do(t, "answer",
		chromedp.SendKeys(css(form+`textarea`), "Answer with a JSON array of integers."),
		chromedp.SendKeys(css(form+`input[name=by]`), "web-tester"),
		chromedp.Click(css(form+`button[type=submit]`)),
		waitTrue(`!document.querySelector('form[data-escalation-form]') && document.getElementById('detail').textContent.includes('web-tester')`))
	es := escalations(t, w.s)
	require.Len(t, es, 1)
	assert.Equal(t, "answered", es[0].State)
	require.NotNil(t, es[0].Answer)
	assert.Equal(t, "fix", es[0].Answer.Resolution)
	assert.Equal(t, "Answer with a JSON array of integers.", es[0].Answer.Instruction)
	assert.Equal(t, "web-tester", es[0].Answer.By)
	b.do(t, "the count", waitTrue(`document.getElementById('esc-count').textContent === ''`))
}

// The screenshots of docs/ (the README's and the guide's): the graph with
// a failed attempt beside the branch, and a failed attempt's detail with
// its diff. Without -update-screenshots the test takes them and checks
// their size only.
func TestWeb_Screenshots(t *testing.T) {
	t.Parallel()
	w := newWebRepo(t)
	w.s.ok("branch", "experiment")
	w.s.ok("commit", "--branch", "experiment", "--role", "user", "-m", "Now as YAML.")
	w.s.ok("commit", "--branch", "experiment", "--role", "assistant", "-m", "colours: [red, green, blue]")
	w.srv.Reply(llmtest.Answer(`{"fruits": ["apple", "pear", "plum"`), llmtest.Answer(`{"fruits": ["apple", "pear", "plum"]}`))
	w.s.ok("chat", "--task", "fruits-1", "--validate", "json", "And three fruits?")
	_, addr := startServe(t, w.s)
	b := newBrowser(t)
	b.do(t, "the viewport", chromedp.EmulateViewport(1100, 480))
	openView(t, b, "http://"+addr+"/")
	// The test's temporary directory would date the pictures: the path
	// as a user in the project's directory sees it.
	eval[string](t, b, `document.getElementById('repo').textContent = '~/agent/.tract/tract.db'`)
	graph := value(t, b, "the graph's screenshot", chromedp.CaptureScreenshot())
	b.do(t, "the diff",
		chromedp.Click(css(`#graph .row[data-hash="%s"]`, w.failed)),
		chromedp.WaitVisible(css(`#detail [data-diff]`)))
	diff := value(t, b, "the diff's screenshot", chromedp.CaptureScreenshot())
	for name, png := range map[string][]byte{"web-graph.png": graph, "web-diff.png": diff} {
		assert.Less(t, len(png), maxScreenshot, "%s: %d bytes", name, len(png))
		if *updateScreenshots {
			require.NoError(t, os.WriteFile(filepath.Join("..", "docs", name), png, 0o644))
		}
	}
}

// At 100,000 commits the page draws its first screen of the graph as
// fast as for a short history: it reads one page of rows and draws only
// the rows on screen. The time from the navigation's start to the graph
// drawn is logged (go test -v); the bound checked is loose, for a busy
// machine, and catches a page that reads or draws the whole history.
func TestWeb_FirstPaintAt100kCommits(t *testing.T) {
	fileOnly(t, "the figure is the file repository's (the other tests show the view on PostgreSQL)")
	w := newWebRepoAfter(t, 100_000)
	_, addr := startServe(t, w.s)
	b := newBrowser(t)
	for i, what := range []string{"first visit (the server reads the history's shape)", "second visit"} {
		openView(t, b, "http://"+addr+"/")
		ms := eval[float64](t, b, `performance.getEntriesByName('tract-graph-drawn')[0].startTime`)
		rows := eval[int](t, b, `document.querySelectorAll('#graph .row').length`)
		t.Logf("%s: graph drawn %.0f ms after the navigation started (%d rows in the document)", what, ms, rows)
		assert.Less(t, rows, 200, "only the rows on screen are in the document")
		assert.Equal(t, rows, eval[int](t, b, `document.querySelectorAll('#graph svg circle').length`))
		if i == 0 {
			// Scrolling far down (row 5,000: the bulk's message 94,99x)
			// reads the pages on the way and draws the rows there: five
			// pages of a thousand rows, which a machine busy with the
			// other tests (imports of 100,000 messages, browsers) once
			// took more than 20 s to serve and draw.
			b.doWithin(t, 90*time.Second, "scroll", chromedp.Evaluate[chromedp.Void](`document.getElementById('graph').scrollTop = 24 * 5000`),
				waitTrueWithin(80*time.Second, `[...document.querySelectorAll('#graph .row .text')].some((e) => /message 9(49|50)[0-9]{2} of the bulk/.test(e.textContent))`))
			// A commit made meanwhile reads the history again, and the
			// page stays where it was.
			top := eval[float64](t, b, `document.getElementById('graph').scrollTop`)
			status := eval[string](t, b, `document.getElementById('graph-status').textContent`)
			hash := w.s.commit("user", "committed while the reader was far down")
			b.do(t, "the new tip", waitTrue(fmt.Sprintf(
				`[...document.querySelectorAll('#branches .hash')].some((e) => e.textContent === '%s')`, hash[:8])),
				waitTrue(fmt.Sprintf(`document.getElementById('graph-status').textContent !== %q`, status)))
			assert.Equal(t, top, eval[float64](t, b, `document.getElementById('graph').scrollTop`))
			assert.True(t, eval[bool](t, b, `[...document.querySelectorAll('#graph .row .text')].some((e) => /message 9(49|50)[0-9]{2} of the bulk/.test(e.textContent))`))
		}
	}
}

// A repository with no commits opens on an empty graph that says so, and
// its first commit appears live.
func TestWeb_EmptyRepository(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	_, addr := startServe(t, s)
	b := newBrowser(t)
	b.do(t, "open", chromedp.Navigate("http://"+addr+"/"),
		waitTrue(`document.body.hasAttribute('data-graph-drawn') && document.getElementById('graph-status').textContent === 'No commits yet.'`),
		waitTrue(`document.getElementById('head').textContent.includes('no commits yet')`),
		waitTrue(`document.getElementById('live').classList.contains('on')`))
	hash := s.commit("user", "the first message")
	b.do(t, "the first commit", waitTrue(fmt.Sprintf(`!!document.querySelector('#graph svg circle[data-hash="%s"]')`, hash)),
		waitTrue(`document.getElementById('graph-status').textContent === '1 commit'`))
}

// A proxy makes a branch per conversation: past a dozen, the sidebar
// offers a filter.
func TestWeb_BranchFilter(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	s.initRepo()
	s.commit("user", "hello")
	for i := range 13 {
		s.ok("branch", fmt.Sprintf("serve/agent-%02d", i))
	}
	s.ok("branch", "night-shift")
	_, addr := startServe(t, s)
	b := newBrowser(t)
	openView(t, b, "http://"+addr+"/")
	b.do(t, "the branches", waitTrue(`document.querySelectorAll('#branches li').length === 15`))
	assert.Equal(t, "15", value(t, b, "the count", chromedp.Text(css(`#branch-count`))))
	b.do(t, "filter", chromedp.SendKeys(css(`#branch-filter`), "night"),
		waitTrue(`document.querySelectorAll('#branches li').length === 1`))
	assert.Equal(t, "night-shift", value(t, b, "the branch", chromedp.Text(css(`#branches li .name`))))
}

// The page outlives its server: stopped and started again, the server
// is found by the live stream's reconnection, and what was committed
// meanwhile appears without a reload.
func TestWeb_ServerRestarts(t *testing.T) {
	t.Parallel()
	w := newWebRepo(t)
	first, addr := startServe(t, w.s)
	b := newBrowser(t)
	b.allow("http://" + addr + "/api/") // the stream cut, and requests refused or reset, while no server listens
	// Chromium fetches the page's icon on its own, after the load, and
	// under load that can be after the server stopped: refused too.
	b.allow("http://" + addr + "/static/icon.svg")
	openView(t, b, "http://"+addr+"/")
	b.do(t, "live", waitTrue(`document.getElementById('live').classList.contains('on')`))
	eval[int](t, b, `window.tractTestMark = 1`)

	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	requireExit(t, first.wait(), exitOK)
	b.do(t, "offline", waitTrue(`!document.getElementById('live').classList.contains('on')`))
	hash := w.s.commit("user", "committed while no server ran")
	w.s.start("serve", "--addr", addr)
	b.do(t, "the commit, after the reconnection",
		waitTrue(`document.getElementById('live').classList.contains('on')`),
		waitTrue(fmt.Sprintf(`!!document.querySelector('#graph .row[data-hash="%s"]')`, hash)))
	assert.Equal(t, 1, eval[int](t, b, `window.tractTestMark`), "the page was not reloaded")
}
