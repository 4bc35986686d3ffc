package tests

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// instantModel answers every chat completion at once, with one answer.
func instantModel(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,`+
			`"message":{"role":"assistant","content":"Noted."},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// tract serve keeps the repository's file open while it is busy (and for
// a moment after), but a command run meanwhile does not wait for it: the
// server hands the file over as soon as the command queues, whether it is
// between calls or in the middle of a stream of them. The commands' lock
// timeout is far shorter than a server that kept the file would make
// them wait.
func TestServe_CommandsDoNotWaitForABusyServer(t *testing.T) {
	t.Parallel()
	up := instantModel(t)
	s := newSandbox(t).withEnv("OPENAI_BASE_URL", up.URL, "OPENAI_API_KEY", "sk-k")
	s.initRepo()
	s.commit("user", "before the server")
	b, addr := startServe(t, s)

	// Calls back to back, from two clients, for as long as the commands run.
	var stop atomic.Bool
	var calls atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for c := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				body := fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"client %d, question %d"}]}`, c, i)
				resp, err := http.Post("http://"+addr+"/v1/chat/completions", "application/json", strings.NewReader(body))
				if err != nil {
					errs <- err
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					errs <- fmt.Errorf("call %d of client %d: %s", i, c, resp.Status)
					return
				}
				calls.Add(1)
			}
		}()
	}
	require.Eventually(t, func() bool { return calls.Load() >= 20 }, 10*time.Second, time.Millisecond, "the server answered no calls")

	// While it records calls: reads and writes of the command line get
	// the file within their lock timeout.
	for i := range 4 {
		s.ok("--lock-timeout", "1s", "log", "-n", "1")
		s.ok("--lock-timeout", "1s", "commit", "--role", "user", "-m", fmt.Sprintf("while busy %d", i))
	}
	before := calls.Load()
	s.ok("--lock-timeout", "1s", "log", "-n", "1")
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Greater(t, calls.Load(), before, "the server went on answering while the commands ran")

	// Between calls, while it lingers: a command queued right after a
	// call waits for the hand-over, not for the linger (100 ms) to end.
	for i := range 3 {
		resp, body := postChat(t, addr, fmt.Sprintf(`{"model":"m","messages":[{"role":"user","content":"idle %d"}]}`, i))
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		s.ok("--lock-timeout", "60ms", "commit", "--role", "user", "-m", fmt.Sprintf("between calls %d", i))
	}

	require.NoError(t, b.cmd.Process.Signal(syscall.SIGTERM))
	requireExit(t, b.wait(), exitOK)
	log := s.ok("log", "--oneline")
	for i := range 4 {
		assert.Contains(t, log.Stdout, fmt.Sprintf("while busy %d", i))
	}
	s.fsckOK()
}
