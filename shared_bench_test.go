package tract_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// benchWorkerEnv, when set, makes the test binary a writer process for the
// benchmarks of a shared repository instead of running tests.
const benchWorkerEnv = "TRACT_BENCH_WORKER"

// appendWorkerEnv, when set to a file's path, makes the test binary an
// appending process of BenchmarkSharedAppendBound (Linux only) instead of
// running tests.
const appendWorkerEnv = "TRACT_BENCH_APPEND"

func TestMain(m *testing.M) {
	if os.Getenv(benchWorkerEnv) != "" {
		os.Exit(benchWorker())
	}
	if os.Getenv(crashWorkerEnv) != "" {
		os.Exit(runCrashWorker())
	}
	if os.Getenv(appendWorkerEnv) != "" {
		os.Exit(appendWorker())
	}
	os.Exit(m.Run())
}

// benchWorker opens TRACT_BENCH_DB, prints "ready", waits for a line on
// standard input, then makes TRACT_BENCH_COMMITS durable commits (0: until
// standard input closes), on branch TRACT_BENCH_BRANCH when it is set (on
// HEAD's otherwise), and prints how many it made, then on a second line
// the latency of each in microseconds.
func benchWorker() int {
	n, _ := strconv.Atoi(os.Getenv("TRACT_BENCH_COMMITS"))
	repo, err := tract.Open(os.Getenv("TRACT_BENCH_DB"), tract.WithLockTimeout(time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer repo.Close()
	t := repo
	if branch := os.Getenv("TRACT_BENCH_BRANCH"); branch != "" {
		t = repo.OnBranch(branch)
	}
	ctx := context.Background()
	return workerLoop(n, func(i int) error {
		_, err := t.User(ctx, fmt.Sprintf("%s message %d", os.Getenv(benchWorkerEnv), i))
		return err
	})
}

// workerLoop is a worker's side of what startWorker, release and finish
// expect: it prints "ready", waits for a line on standard input, then
// runs op n times (0: until standard input closes), each timed, and
// prints how many ran, then on a second line the latency of each in
// microseconds. It returns the process's exit code.
func workerLoop(n int, op func(i int) error) int {
	fmt.Println("ready")
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return 1
	}
	var stop atomic.Bool
	if n == 0 {
		go func() {
			_, _ = io.Copy(io.Discard, in)
			stop.Store(true)
		}()
	}
	made := 0
	lat := make([]byte, 0, 8*n)
	for ; n == 0 && !stop.Load() || made < n; made++ {
		start := time.Now()
		if err := op(made); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		lat = strconv.AppendInt(lat, time.Since(start).Microseconds(), 10)
		lat = append(lat, ' ')
	}
	fmt.Println(made)
	fmt.Println(string(lat))
	return 0
}

// benchWriter is a writer process started by startWriters.
type benchWriter struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startWriters starts n writer processes on db, each to make commits
// durable commits (0: until stopped), on a branch of its own when
// branches is set (made first), and waits until each has opened the
// repository. go releases them all at once.
func startWriters(b *testing.B, db string, n, commits int, branches bool) []*benchWriter {
	b.Helper()
	if branches {
		tr, err := tract.Open(db)
		require.NoError(b, err)
		ctx := context.Background()
		_, err = tr.User(ctx, "root")
		require.NoError(b, err)
		for i := range n {
			_, err := tr.CreateBranch(ctx, fmt.Sprintf("w%d", i), "")
			require.NoError(b, err)
		}
		require.NoError(b, tr.Close())
	}
	ws := make([]*benchWriter, n)
	for i := range ws {
		env := []string{benchWorkerEnv + "=" + fmt.Sprintf("w%d", i), "TRACT_BENCH_DB=" + db,
			"TRACT_BENCH_COMMITS=" + strconv.Itoa(commits)}
		if branches {
			env = append(env, "TRACT_BENCH_BRANCH="+fmt.Sprintf("w%d", i))
		}
		ws[i] = startWorker(b, env...)
	}
	return ws
}

// startWorker starts the test binary again with env added (a worker's
// variables, which TestMain dispatches on) and waits until it prints
// "ready".
func startWorker(b *testing.B, env ...string) *benchWriter {
	b.Helper()
	self, err := os.Executable()
	require.NoError(b, err)
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(b, err)
	out, err := cmd.StdoutPipe()
	require.NoError(b, err)
	require.NoError(b, cmd.Start())
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	w := &benchWriter{cmd: cmd, in: in, out: bufio.NewReader(out)}
	line, err := w.out.ReadString('\n')
	require.NoError(b, err)
	require.Equal(b, "ready\n", line)
	return w
}

func release(ws []*benchWriter) {
	for _, w := range ws {
		_, _ = io.WriteString(w.in, "go\n")
	}
}

// finish stops the writers (closing their input) and returns the commits
// they made, when the first and the last of them finished, and the
// latencies of the commits.
func finish(b *testing.B, ws []*benchWriter) (total int, first, last time.Time, lat []time.Duration) {
	b.Helper()
	type done struct {
		made int
		at   time.Time
		lat  []time.Duration
		err  error
	}
	results := make(chan done, len(ws))
	for _, w := range ws {
		w.in.Close()
		go func() {
			line, err := w.out.ReadString('\n')
			at := time.Now()
			if err != nil {
				results <- done{err: err}
				return
			}
			made, err := strconv.Atoi(line[:len(line)-1])
			if err != nil {
				results <- done{err: err}
				return
			}
			line, err = w.out.ReadString('\n')
			var lat []time.Duration
			for _, f := range strings.Fields(line) {
				us, perr := strconv.ParseInt(f, 10, 64)
				if perr != nil {
					err = perr
				}
				lat = append(lat, time.Duration(us)*time.Microsecond)
			}
			results <- done{made, at, lat, err}
		}()
	}
	for range ws {
		d := <-results
		require.NoError(b, d.err)
		total += d.made
		lat = append(lat, d.lat...)
		if first.IsZero() || d.at.Before(first) {
			first = d.at
		}
		last = d.at
	}
	for _, w := range ws {
		require.NoError(b, w.cmd.Wait())
	}
	return total, first, last, lat
}

// BenchmarkCommitProcesses measures durable commits/s on one branch made
// by 1, 2, 4 and 8 writer processes at once (b.N commits shared equally
// among them), on a file and on PostgreSQL (see onBackends). Every commit
// is its own transaction; the processes take turns on the file's lock
// (on the repository's row). finish-spread is how far apart the first and
// the last writer finished, as a share of the run: near 0 when the turns
// are fair, near 100% when one writer waits for the others to finish.
func BenchmarkCommitProcesses(b *testing.B) {
	onBackends(b, true, benchCommitProcesses)
}

func benchCommitProcesses(b *testing.B, be benchBackend) {
	for _, writers := range []int{1, 2, 4, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			runWriters(b, be, writers, false)
		})
	}
}

// BenchmarkCommitProcessBranches measures durable commits/s made by 1 and
// 8 writer processes at once, each on a branch of its own (b.N commits
// shared equally among them), and the latency of one commit (p50, p99),
// on a file and on PostgreSQL (see onBackends).
func BenchmarkCommitProcessBranches(b *testing.B) {
	onBackends(b, true, func(b *testing.B, be benchBackend) {
		for _, writers := range []int{1, 8} {
			b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
				runWriters(b, be, writers, true)
			})
		}
	})
}

// runWriters runs writers processes making b.N commits among them, on
// their own branches when branches is set, and reports their rate, the
// finish spread and the latency percentiles.
func runWriters(b *testing.B, be benchBackend, writers int, branches bool) {
	db := be.location(b)
	tr, err := tract.Init(db)
	require.NoError(b, err)
	require.NoError(b, tr.Close())
	each := max(b.N/writers, 1)
	ws := startWriters(b, db, writers, each, branches)
	b.ResetTimer()
	start := time.Now()
	release(ws)
	total, first, last, lat := finish(b, ws)
	b.StopTimer()
	b.ReportMetric(100*float64(last.Sub(first))/float64(last.Sub(start)), "finish-spread-%")
	reportLatencies(b, total, lat)
}

// BenchmarkReaderWhileWriting measures how long a reader in another
// process (here, a handle of the benchmark's own) takes to read one commit
// while a writer process commits continuously, against the same read with
// no writer and against one durable write transaction (the target: a
// reader waits at most about one write transaction).
func BenchmarkReaderWhileWriting(b *testing.B) {
	for _, writing := range []bool{false, true} {
		name := "idle"
		if writing {
			name = "writer"
		}
		b.Run(name, func(b *testing.B) {
			db := filepath.Join(b.TempDir(), "tract.db")
			tr, err := tract.Init(db)
			require.NoError(b, err)
			_, err = tr.Import(context.Background(), chain(1000, 200, "m"))
			require.NoError(b, err)
			require.NoError(b, tr.Close())
			var ws []*benchWriter
			if writing {
				ws = startWriters(b, db, 1, 0, false)
				release(ws)
			}
			reader, err := tract.Open(db, tract.WithLockTimeout(time.Minute))
			require.NoError(b, err)
			defer reader.Close()
			ctx := context.Background()
			waits := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := reader.Log(ctx, tract.LogLimit(1)); err != nil {
					b.Fatal(err)
				}
				waits = append(waits, time.Since(start))
				// A reader that reads nonstop would never be idle; pause like
				// a person or an agent between reads.
				time.Sleep(200 * time.Microsecond)
			}
			b.StopTimer()
			made := 0
			if writing {
				made, _, _, _ = finish(b, ws)
			}
			slices.Sort(waits)
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64(waits[len(waits)-1].Microseconds()), "max-µs")
			if writing {
				b.ReportMetric(float64(made)/b.Elapsed().Seconds(), "writer-commits/s")
			}
		})
	}
}
