package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/serve"
)

// loadFor is how long each phase of BenchmarkProxy_Load runs: short by
// default, so that 'go test -bench .' stays quick; the figures in
// docs/proxy.md come from -load 30s.
var loadFor = flag.Duration("load", 3*time.Second, "how long each phase of BenchmarkProxy_Load runs (the documented figures: 30s)")

// loadRate is the rate of BenchmarkProxy_Load's paced phase.
var loadRate = flag.Int("load-rate", 1000, "requests a second, over all conversations, in BenchmarkProxy_Load's paced phase")

// loadNoSync runs BenchmarkProxy_Load on a repository that does not sync
// its writes: what the proxy adds but for waiting on the disk.
var loadNoSync = flag.Bool("load-nosync", false, "BenchmarkProxy_Load's repository does not sync its writes")

// loadApart runs BenchmarkProxy_Load's clients and upstream in a process
// of their own: the test binary run again, as loadClientsEnv says.
var loadApart = flag.Bool("load-apart", false, "BenchmarkProxy_Load's clients and upstream run in a process of their own, as in a deployment")

// loadClientsEnv, when set, makes the test binary the process of
// BenchmarkProxy_Load's clients and upstream under -load-apart (see
// loadClients); its value is "DURATION RATE", the phases' length and the
// paced rate.
const loadClientsEnv = "TRACT_LOAD_CLIENTS"

func TestMain(m *testing.M) {
	if v := os.Getenv(loadClientsEnv); v != "" {
		os.Exit(loadClients(v))
	}
	os.Exit(m.Run())
}

// loadConversations is how many conversations BenchmarkProxy_Load runs at
// once; loadTurns how many calls one makes before a new one starts.
const loadConversations, loadTurns = 100, 20

// instantAnswer is the chat completion the instant upstream gives.
var instantAnswer = []byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,` +
	`"message":{"role":"assistant","content":"Noted; go on.","refusal":null},"logprobs":null,"finish_reason":"stop"}],` +
	`"usage":{"prompt_tokens":120,"completion_tokens":4,"total_tokens":124}}`)

// instantUpstream answers every chat completion at once, with
// instantAnswer, as a model that took no time would.
func instantUpstream() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(instantAnswer)
	}))
}

// loadClient is a client of many conversations at once: connections kept
// for each of them.
func loadClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 4*loadConversations, 4*loadConversations
	return &http.Client{Transport: tr}
}

// conversation is one client's conversation: it grows by a question and
// the answer each call, and starts again after loadTurns calls. Its
// messages are kept encoded, so that a call costs the client little.
type conversation struct {
	id, turn int
	// msgs is the messages answered so far, encoded and joined by commas;
	// asked the last question's encoding, not answered yet.
	msgs, asked []byte
	next        *atomic.Int64
}

// answer is the encoded answer of the instant upstream.
var answer, _ = json.Marshal(msg{"assistant", "Noted; go on."})

// body returns the next request's body.
func (c *conversation) body() []byte {
	if c.turn == 0 || c.turn >= loadTurns {
		c.id, c.turn = int(c.next.Add(1)), 0
		c.msgs, _ = json.Marshal(msg{"system", "You are a careful assistant. Answer briefly, and ask when something is unclear."})
	}
	c.asked, _ = json.Marshal(msg{"user", fmt.Sprintf("Conversation %d, question %d: what should the next step of the plan be, given what we said so far? %s",
		c.id, c.turn, strings.Repeat("Some context. ", 8))})
	b := make([]byte, 0, len(c.msgs)+len(c.asked)+64)
	b = append(append(append(b, `{"model":"m","messages":[`...), c.msgs...), ',')
	return append(append(b, c.asked...), "]}"...)
}

// answered takes the answer into the conversation.
func (c *conversation) answered() {
	c.msgs = append(append(append(append(c.msgs, ','), c.asked...), ','), answer...)
	c.turn++
}

// loadStats gathers what the calls of a phase saw.
type loadStats struct {
	// proxied is set for calls through the proxy, whose answers name
	// their commits.
	proxied   bool
	mu        sync.Mutex
	latencies []time.Duration
	commits   []string
	failed    atomic.Int64
}

func (s *loadStats) add(d time.Duration, commit string) {
	s.mu.Lock()
	s.latencies = append(s.latencies, d)
	if s.proxied {
		s.commits = append(s.commits, commit)
	}
	s.mu.Unlock()
}

// quantile returns the q-quantile of the latencies.
func (s *loadStats) quantile(q float64) time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	slices.Sort(s.latencies)
	return s.latencies[min(len(s.latencies)-1, int(q*float64(len(s.latencies))))]
}

// call sends body to url and records its latency and, from the proxy, the
// commit it names.
func (s *loadStats) call(hc *http.Client, url string, body []byte) bool {
	start := time.Now()
	resp, err := hc.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		s.failed.Add(1)
		return false
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.failed.Add(1)
		return false
	}
	s.add(time.Since(start), resp.Header.Get(serve.HeaderCommit))
	return true
}

// newConversations returns n conversations, numbered from next.
func newConversations(n int, next *atomic.Int64) []*conversation {
	cs := make([]*conversation, n)
	for i := range cs {
		cs[i] = &conversation{next: next}
	}
	return cs
}

// run runs the conversations cs against url, each in a goroutine, until
// the deadline: each sends its next call when the last is answered and,
// when every is given, the interval has passed since it sent the last
// (paced).
func (s *loadStats) run(hc *http.Client, url string, cs []*conversation, until time.Time, every time.Duration) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var tick *time.Ticker
			if every > 0 {
				time.Sleep(rand.N(every)) // spread the conversations over the interval
				tick = time.NewTicker(every)
				defer tick.Stop()
			}
			for time.Now().Before(until) {
				if s.call(hc, url, c.body()) {
					c.answered()
				}
				if tick != nil {
					<-tick.C
				}
			}
		}()
	}
	wg.Wait()
}

// cpuTime returns the CPU time the process has used, in user and system
// mode.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapPeak samples the heap in use until stop is closed and returns the
// highest it saw.
func heapPeak(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var ms runtime.MemStats
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// BenchmarkProxy_Load runs 100 conversations at once through the proxy
// (New's own upstream client, as 'tract serve' runs it) to an upstream
// that answers at once, recording into a file repository that syncs each
// write (-load-nosync: that does not). The clients and the upstream run
// in the benchmark's process, on the same cores as the proxy, or, with
// -load-apart, in a process of their own (the test binary run again), as
// agents and a model server do in a deployment. Phases of -load each:
//
//   - saturated: each conversation sends its next call as soon as the last
//     is answered; requests/s is how many calls a second the proxy
//     answered and recorded, requests/cpu-s how many a second of the
//     process's CPU time (its clients' and upstream's included; with
//     -load-apart the proxy's process alone): what it would do on one
//     core of its own;
//   - paced: the conversations send -load-rate calls a second in all,
//     through the proxy and straight to the upstream in turns of a second
//     (loadWindow), -load of each, so that the machine's other work falls
//     on both alike; added-p50-ms and added-p99-ms are the proxy's latency
//     quantiles less the direct calls', added-cpu-µs/call the process's
//     CPU time a call through the proxy took less a direct call's (with
//     -load-apart: the proxy process's CPU time a call, all of it the
//     proxy's), the proxy's own cost, which the machine's other work
//     changes little; the paced calls also go through the floor
//     (floorProxy) in turns: floor-added-p50-ms and floor-added-p99-ms
//     are its quantiles less the direct calls', added-p99/floor the
//     proxy's added p99 over the floor's, and floor-cpu-µs/call (with
//     -load-apart) its CPU time a call: what any recording proxy on this
//     disk and machine could do in the same run.
//
// Then every commit a response named (X-Tract-Commit) is looked for on
// the branches: lost-commits must be 0. peak-heap-MB is the highest heap
// in use sampled during the phases (the clients' and the upstream's
// included, but with -load-apart). Before the phases of a repository that
// syncs, disk-sync-p99-ms measures the disk alone: the 99th percentile of
// a page written and synced twice (fdatasync on Linux), as a durable
// bbolt commit does, which no durable answer can beat.
//
//	go test ./serve -run '^$' -bench Load -load 30s [-load-rate 1000] [-load-nosync] [-load-apart]
func BenchmarkProxy_Load(b *testing.B) {
	for range b.N {
		loadOnce(b)
	}
}

// loadPhase is what the calls of one phase saw, as the clients' process
// reports it under -load-apart.
type loadPhase struct {
	Latencies []time.Duration `json:"latencies"`
	Commits   []string        `json:"commits"`
	Failed    int64           `json:"failed"`
	// Seconds is how long the phase ran.
	Seconds float64 `json:"seconds"`
}

func (s *loadStats) phase(d time.Duration) loadPhase {
	return loadPhase{Latencies: s.latencies, Commits: s.commits, Failed: s.failed.Load(), Seconds: d.Seconds()}
}

func (p loadPhase) stats() *loadStats {
	s := &loadStats{latencies: p.Latencies, commits: p.Commits}
	s.failed.Store(p.Failed)
	return s
}

// loadWindow is how long the paced calls go through the proxy, or
// straight to the upstream, before they switch: the two take turns, so
// that the machine's other work, which comes and goes, falls on both
// alike.
const loadWindow = time.Second

// loadPhases runs the phases against the proxy at proxyURL, the upstream
// at upURL and the floor proxy at floorURL (see floorProxy): saturated,
// then the paced calls through the proxy, straight to the upstream and
// through the floor proxy in turns of loadWindow, length in all for each.
// It calls mark with "saturated", "paced", "direct" or "floor" as each
// phase or turn starts, and "end" after the last.
func loadPhases(hc *http.Client, proxyURL, upURL, floorURL string, length time.Duration, rate int, mark func(phase string)) (saturated, proxied, direct, floor loadPhase) {
	var next atomic.Int64
	sat := loadStats{proxied: true}
	mark("saturated")
	start := time.Now()
	sat.run(hc, proxyURL+"/v1/chat/completions", newConversations(loadConversations, &next), start.Add(length), 0)
	saturated = sat.phase(time.Since(start))

	every := time.Duration(float64(time.Second) * loadConversations / float64(rate))
	p, d, f := loadStats{proxied: true}, loadStats{}, loadStats{}
	pcs, dcs, fcs := newConversations(loadConversations, &next), newConversations(loadConversations, &next), newConversations(loadConversations, &next)
	for done := time.Duration(0); done < length; done += loadWindow {
		w := min(loadWindow, length-done)
		mark("paced")
		p.run(hc, proxyURL+"/v1/chat/completions", pcs, time.Now().Add(w), every)
		mark("direct")
		d.run(hc, upURL+"/v1/chat/completions", dcs, time.Now().Add(w), every)
		mark("floor")
		f.run(hc, floorURL+"/v1/chat/completions", fcs, time.Now().Add(w), every)
	}
	mark("end")
	return saturated, p.phase(length), d.phase(length), f.phase(length)
}

// floorProxy is the least a recording proxy can do on bbolt: it passes
// each call to the upstream at upURL and, before it answers, appends the
// last 512 bytes of the request (about its new message) and the answer to
// a bucket of db, under a sequence number, the writes of concurrent calls
// grouped into one transaction (a commit durable or not as db is) while
// the last one commits. Beside the proxy in BenchmarkProxy_Load, its
// latency is the floor the file's commits and the machine set at that
// moment: no parsing, no hashing, no conversations, no index.
func floorProxy(db *bolt.DB, upURL string) http.Handler {
	type write struct {
		rec  []byte
		done chan error
	}
	var (
		mu      sync.Mutex
		queue   []write
		writing bool
	)
	// commit writes the queue's records in one transaction, then the
	// next queue's, until none waits.
	commit := func() {
		for {
			mu.Lock()
			ws := queue
			queue = nil
			if len(ws) == 0 {
				writing = false
				mu.Unlock()
				return
			}
			mu.Unlock()
			err := db.Update(func(tx *bolt.Tx) error {
				bk, err := tx.CreateBucketIfNotExists([]byte("calls"))
				if err != nil {
					return err
				}
				bk.FillPercent = 1
				for _, w := range ws {
					seq, _ := bk.NextSequence()
					if err := bk.Put(binary.BigEndian.AppendUint64(nil, seq), w.rec); err != nil {
						return err
					}
				}
				return nil
			})
			for _, w := range ws {
				w.done <- err
			}
		}
	}
	hc := loadClient()
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		resp, err := hc.Post(upURL+r.URL.Path, "application/json", bytes.NewReader(body))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadGateway)
			return
		}
		w := write{rec: append(bytes.Clone(body[max(0, len(body)-512):]), answer...), done: make(chan error, 1)}
		mu.Lock()
		queue = append(queue, w)
		lead := !writing
		writing = true
		mu.Unlock()
		if lead {
			go commit()
		}
		if err := <-w.done; err != nil {
			http.Error(rw, err.Error(), http.StatusInternalServerError)
			return
		}
		rw.Header().Set("Content-Type", "application/json")
		rw.Write(answer)
	})
}

// loadClients is the process of the clients and the upstream under
// -load-apart: it starts the upstream and prints its URL, reads the
// proxy's URL from its standard input, prints each phase's name as it
// starts (and "end"), then what the phases saw, as one JSON line.
func loadClients(arg string) int {
	f := strings.Fields(arg)
	var length time.Duration
	rate, err := 0, errors.New("want two fields")
	if len(f) == 2 {
		if length, err = time.ParseDuration(f[0]); err == nil {
			rate, err = strconv.Atoi(f[1])
		}
	}
	if err != nil || length <= 0 || rate <= 0 {
		fmt.Fprintf(os.Stderr, "%s=%q: want a duration and a rate\n", loadClientsEnv, arg)
		return 2
	}
	up := instantUpstream()
	defer up.Close()
	fmt.Println(up.URL)
	in := bufio.NewScanner(os.Stdin)
	var urls []string
	for len(urls) < 2 && in.Scan() {
		urls = append(urls, strings.TrimSpace(in.Text()))
	}
	if len(urls) < 2 {
		fmt.Fprintln(os.Stderr, "no proxy and floor proxy URLs on standard input")
		return 2
	}
	hc := loadClient()
	defer hc.CloseIdleConnections()
	saturated, proxied, direct, floor := loadPhases(hc, urls[0], up.URL, urls[1], length, rate, func(phase string) { fmt.Println(phase) })
	if err := json.NewEncoder(os.Stdout).Encode([]loadPhase{saturated, proxied, direct, floor}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startClients starts the process of the clients and the upstream
// (loadClients) and returns the upstream's URL, and its output to read
// on from.
func startClients(b *testing.B) (upURL string, in io.Writer, out *bufio.Scanner, wait func() error) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", loadClientsEnv, *loadFor, *loadRate))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	require.NoError(b, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	waited := false
	b.Cleanup(func() {
		if !waited { // the benchmark failed first
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	out = bufio.NewScanner(stdout)
	out.Buffer(nil, 1<<30)
	if !out.Scan() {
		b.Fatalf("the clients' process printed no upstream URL: %v", out.Err())
	}
	return out.Text(), stdin, out, func() error { stdin.Close(); waited = true; return cmd.Wait() }
}

// diskSyncP99 returns the 99th percentile of a page written and synced
// twice (dataSync), as a durable bbolt commit does (its pages, then
// its meta page), in dir, measured for d.
func diskSyncP99(b *testing.B, dir string, d time.Duration) time.Duration {
	f, err := os.Create(filepath.Join(dir, "sync-probe"))
	require.NoError(b, err)
	defer f.Close()
	page := make([]byte, 4096)
	var s loadStats
	for end := time.Now().Add(d); time.Now().Before(end); {
		start := time.Now()
		for range 2 {
			_, err := f.WriteAt(page, 0)
			require.NoError(b, err)
			require.NoError(b, dataSync(f))
		}
		s.latencies = append(s.latencies, time.Since(start))
		time.Sleep(time.Millisecond)
	}
	return s.quantile(0.99)
}

func loadOnce(b *testing.B) {
	b.StopTimer()
	ctx := context.Background()
	var opts []tract.Option
	if *loadNoSync {
		opts = append(opts, tract.WithNoSync())
	}
	dir := b.TempDir()
	var diskP99 time.Duration
	if !*loadNoSync {
		diskP99 = diskSyncP99(b, dir, min(*loadFor, 3*time.Second))
	}
	repo, err := tract.Init(filepath.Join(dir, "tract.db"), opts...)
	require.NoError(b, err)
	defer repo.Close()
	defer repo.Linger()() // as tract serve does
	var upURL string
	var toClients io.Writer
	var fromClients *bufio.Scanner
	var waitClients func() error
	if *loadApart {
		upURL, toClients, fromClients, waitClients = startClients(b)
	} else {
		up := instantUpstream()
		defer up.Close()
		upURL = up.URL
	}
	h, err := serve.New(ctx, repo, serve.WithOpenAI(upURL+"/v1", "k"))
	require.NoError(b, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	floorDB, err := bolt.Open(filepath.Join(dir, "floor.db"), 0o600, &bolt.Options{NoSync: *loadNoSync})
	require.NoError(b, err)
	defer floorDB.Close()
	floor := httptest.NewServer(floorProxy(floorDB, upURL))
	defer floor.Close()
	stop := make(chan struct{})
	peak := heapPeak(stop)

	// cpu is the process's CPU time in each phase ("paced" and "direct":
	// over all their turns).
	cpu := map[string]time.Duration{}
	var last string
	var lastCPU time.Duration
	mark := func(phase string) {
		now := cpuTime()
		if last != "" {
			cpu[last] += now - lastCPU
		}
		last, lastCPU = phase, now
	}
	var phases [4]loadPhase
	b.StartTimer()
	if *loadApart {
		_, err := fmt.Fprintf(toClients, "%s\n%s\n", proxy.URL, floor.URL)
		require.NoError(b, err)
		for fromClients.Scan() {
			line := fromClients.Text()
			if strings.HasPrefix(line, "[") {
				require.NoError(b, json.Unmarshal([]byte(line), &phases))
				break
			}
			mark(line)
		}
		require.NoError(b, waitClients())
	} else {
		hc := loadClient()
		defer hc.CloseIdleConnections()
		phases[0], phases[1], phases[2], phases[3] = loadPhases(hc, proxy.URL, upURL, floor.URL, *loadFor, *loadRate, mark)
	}
	b.StopTimer()
	close(stop)
	require.Equal(b, "end", last, "the phases' end")
	saturated, proxied, direct, floored := phases[0].stats(), phases[1].stats(), phases[2].stats(), phases[3].stats()

	// Every answered call's commit is on a branch: reachable from one, as
	// LogAll reads them all in one walk (a log of each branch would read
	// every ref for each).
	on := map[string]bool{}
	all, err := repo.LogAll(ctx)
	require.NoError(b, err)
	for _, h := range all.Commits {
		on[h.Hash.String()] = true
	}
	lost := 0
	for _, c := range append(saturated.commits, proxied.commits...) {
		if c == "" || !on[c] {
			lost++
		}
	}
	if n := saturated.failed.Load() + proxied.failed.Load() + direct.failed.Load() + floored.failed.Load(); n > 0 {
		b.Errorf("%d calls failed", n)
	}
	if lost > 0 {
		b.Errorf("%d answered calls' commits are on no branch", lost)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(float64(len(saturated.latencies))/phases[0].Seconds, "requests/s")
	b.ReportMetric(float64(len(saturated.latencies))/cpu["saturated"].Seconds(), "requests/cpu-s")
	b.ReportMetric(float64(len(proxied.latencies))/loadFor.Seconds(), "paced-requests/s")
	b.ReportMetric(ms(proxied.quantile(0.5)-direct.quantile(0.5)), "added-p50-ms")
	b.ReportMetric(ms(proxied.quantile(0.99)-direct.quantile(0.99)), "added-p99-ms")
	b.ReportMetric(ms(direct.quantile(0.99)), "direct-p99-ms")
	floorP99 := floored.quantile(0.99) - direct.quantile(0.99)
	b.ReportMetric(ms(floored.quantile(0.5)-direct.quantile(0.5)), "floor-added-p50-ms")
	b.ReportMetric(ms(floorP99), "floor-added-p99-ms")
	b.ReportMetric(float64(proxied.quantile(0.99)-direct.quantile(0.99))/float64(max(floorP99, time.Microsecond)), "added-p99/floor")
	if !*loadNoSync {
		b.ReportMetric(ms(diskP99), "disk-sync-p99-ms")
	}
	b.ReportMetric(float64(lost), "lost-commits")
	b.ReportMetric(float64(<-peak)/(1<<20), "peak-heap-MB")
	perCall := func(cpu time.Duration, s *loadStats) float64 {
		return float64(cpu.Microseconds()) / float64(max(1, len(s.latencies)))
	}
	added := perCall(cpu["paced"], proxied)
	if !*loadApart {
		added -= perCall(cpu["direct"], direct)
	}
	b.ReportMetric(added, "added-cpu-µs/call")
	if *loadApart {
		b.ReportMetric(perCall(cpu["floor"], floored), "floor-cpu-µs/call")
	}
	b.ReportMetric(0, "ns/op")
}

// BenchmarkNew_Index measures the Handler's start on a repository of 100
// conversations of 1,000 messages each: reading every branch once.
func BenchmarkNew_Index(b *testing.B) {
	repo, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), tract.WithNoSync())
	require.NoError(b, err)
	defer repo.Close()
	ctx := context.Background()
	for c := range 100 {
		msgs := make([]tract.ImportMessage, 1000)
		for i := range msgs {
			role := tract.RoleUser
			if i%2 == 1 {
				role = tract.RoleAssistant
			}
			msgs[i] = tract.ImportMessage{Role: role, Content: fmt.Sprintf("conversation %d, message %d", c, i)}
		}
		_, err := repo.CommitChainOn(ctx, fmt.Sprintf("c%d", c), tract.Hash{}, msgs)
		require.NoError(b, err)
	}
	b.ResetTimer()
	for range b.N {
		_, err := serve.New(ctx, repo)
		require.NoError(b, err)
	}
}

// BenchmarkProxy_Call sends the calls of conversations of loadTurns calls
// one after another through the proxy to the instant upstream, into a
// file repository that syncs its writes (sync) or not (nosync): a call's
// latency alone, and the proxy's own cost of a call (allocs/op, B/op;
// ns/op includes the client's and the upstream's), which a loaded
// machine changes less than BenchmarkProxy_Load's latencies.
func BenchmarkProxy_Call(b *testing.B) {
	for _, sync := range []bool{true, false} {
		name := "sync"
		var opts []tract.Option
		if !sync {
			name, opts = "nosync", append(opts, tract.WithNoSync())
		}
		b.Run(name, func(b *testing.B) { benchCalls(b, opts...) })
	}
}

func benchCalls(b *testing.B, opts ...tract.Option) {
	repo, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), opts...)
	require.NoError(b, err)
	defer repo.Close()
	defer repo.Linger()() // as tract serve does
	up := instantUpstream()
	defer up.Close()
	h, err := serve.New(context.Background(), repo, serve.WithOpenAI(up.URL+"/v1", "k"))
	require.NoError(b, err)
	proxy := httptest.NewServer(h)
	defer proxy.Close()
	hc := loadClient()
	defer hc.CloseIdleConnections()
	var stats loadStats
	c := &conversation{next: new(atomic.Int64)}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if !stats.call(hc, proxy.URL+"/v1/chat/completions", c.body()) {
			b.Fatal("a call failed")
		}
		c.answered()
	}
}
