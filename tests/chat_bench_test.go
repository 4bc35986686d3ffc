package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/llm"
)

// constModel is a loopback OpenAI server that answers every chat
// completion at once with the same valid JSON, adding up the time its
// handler takes (reading the request included).
type constModel struct {
	*httptest.Server
	mu    sync.Mutex // guards spent and calls
	spent time.Duration
	calls int
}

func newConstModel(b *testing.B) *constModel {
	m := &constModel{}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		_, err := io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		if err == nil {
			_, err = io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"ok\":true}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
		}
		m.mu.Lock()
		m.spent += time.Since(start)
		m.calls++
		m.mu.Unlock()
		if err != nil {
			b.Error(err)
		}
	}))
	b.Cleanup(m.Close)
	return m
}

// take returns the handler time and calls since the last take.
func (m *constModel) take() (time.Duration, int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, n := m.spent, m.calls
	m.spent, m.calls = 0, 0
	return d, n
}

// BenchmarkChatValidatedCLI runs 'tract chat -V json', a validated turn
// of one attempt, as a new process per turn, on a file repository of
// 1,000, 10,000 and 100,000 imported messages of about 300 bytes, against
// a loopback server that answers at once. Per attempt it reports:
// wall-ms, the process from start to exit; server-ms, the server's
// handler (reading the request, answering); request-ms, what encoding
// and sending the same request costs (the llm client's Complete of the
// compiled messages, in a new process, its server time left out); and
// tract-ms = wall − server − request, tract's own work (starting, opening
// the file, compiling the context, the turn's writes, validating), whose
// target is 10 ms at any size. first-ms is the first turn's wall time:
// the history was imported, so that turn compiles it from the commits and
// writes its compiled-context records. compile-ms is what compiling the
// context takes a new process after that (part of tract-ms).
func BenchmarkChatValidatedCLI(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) { benchChatCLI(b, n) })
	}
}

func benchChatCLI(b *testing.B, n int) {
	dir := b.TempDir()
	model := newConstModel(b)
	env := append(os.Environ(), "HOME="+dir, "NO_COLOR=1", "OPENAI_BASE_URL="+model.URL+"/v1",
		"OPENAI_API_KEY=sk-bench", "TRACT_MODEL=m", "TRACT_DB=")
	run := func(stdin io.Reader, args ...string) time.Duration {
		b.Helper()
		cmd := exec.Command(tractBin, args...)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, stdin
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		err := cmd.Run()
		took := time.Since(start)
		require.NoError(b, err, "tract %s\n%s", strings.Join(args, " "), out.String())
		return took
	}
	run(nil, "init")
	var history bytes.Buffer
	enc := json.NewEncoder(&history)
	for i := range n {
		role := []string{"user", "assistant"}[i%2]
		require.NoError(b, enc.Encode(map[string]string{"role": role,
			"content": fmt.Sprintf("message %d %s", i, strings.Repeat("lorem ipsum ", 24))}))
	}
	run(&history, "import")
	first := run(nil, "chat", "-V", "json", "question 0")
	model.take()

	// What the request itself costs: the same messages, encoded and sent
	// by the same client in a new process of their own, after each turn
	// (so that the two see the same load).
	worker := func() (compile, request time.Duration) {
		b.Helper()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(env, requestWorkerEnv+"=1", "TRACT_DB="+filepath.Join(dir, ".tract", "tract.db"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(b, err, "request worker: %s", stderr.String())
		var c, r int64
		_, err = fmt.Sscan(string(out), &c, &r)
		require.NoError(b, err, "request worker said %q", out)
		served, _ := model.take()
		return time.Duration(c), time.Duration(r) - served
	}

	b.ResetTimer()
	var wall, served, request, compile time.Duration
	for i := range b.N {
		wall += run(nil, "chat", "-V", "json", fmt.Sprintf("question %d", i+1))
		s, calls := model.take()
		require.Equal(b, 1, calls, "one attempt a turn")
		served += s
		b.StopTimer()
		c, r := worker()
		compile, request = compile+c, request+r
		b.StartTimer()
	}
	b.StopTimer()
	per := func(d time.Duration) float64 { return float64(d) / float64(b.N) / 1e6 }
	b.ReportMetric(per(wall), "wall-ms")
	b.ReportMetric(per(served), "server-ms")
	b.ReportMetric(per(request), "request-ms")
	b.ReportMetric(per(compile), "compile-ms")
	b.ReportMetric(per(wall-served-request), "tract-ms")
	b.ReportMetric(float64(first)/1e6, "first-ms")
	b.ReportMetric(0, "ns/op")
}

// requestWorkerEnv makes the test binary a request worker
// (runRequestWorker) instead of running tests.
const requestWorkerEnv = "TRACT_E2E_REQUEST_WORKER"

// runRequestWorker compiles the repository TRACT_DB names, as a new
// process would, and sends the model what 'tract chat' would (the
// context and a question) through the OpenAI client, and prints the two
// durations (compiling, then encoding and sending the request and
// reading the answer), for BenchmarkChatValidatedCLI.
func runRequestWorker() int {
	ctx := context.Background()
	start := time.Now()
	tr, err := tract.Open(os.Getenv("TRACT_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "request worker:", err)
		return 1
	}
	msgs, err := tr.Compile(ctx)
	tr.Close()
	compiled := time.Since(start)
	if err != nil {
		fmt.Fprintln(os.Stderr, "request worker:", err)
		return 1
	}
	msgs = append(msgs, tract.Message{Role: "user", Content: "one more question"})
	client, err := llm.NewOpenAIFromEnv(os.Getenv, llm.WithModel(os.Getenv("TRACT_MODEL")))
	if err == nil {
		start = time.Now()
		_, err = client.Complete(ctx, llm.Request{Messages: msgs})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "request worker:", err)
		return 1
	}
	fmt.Println(compiled.Nanoseconds(), time.Since(start).Nanoseconds())
	return 0
}
