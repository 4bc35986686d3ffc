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
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract"
)

// benchWorkerEnv, when set, makes the test binary a writer process for the
// benchmarks of a shared repository instead of running tests.
const benchWorkerEnv = "TRACT_BENCH_WORKER"

func TestMain(m *testing.M) {
	if os.Getenv(benchWorkerEnv) != "" {
		os.Exit(benchWorker())
	}
	if os.Getenv(crashWorkerEnv) != "" {
		os.Exit(runCrashWorker())
	}
	os.Exit(m.Run())
}

// benchWorker opens TRACT_BENCH_DB, prints "ready", waits for a line on
// standard input, then makes TRACT_BENCH_COMMITS durable commits (0: until
// standard input closes) and prints how many it made.
func benchWorker() int {
	n, _ := strconv.Atoi(os.Getenv("TRACT_BENCH_COMMITS"))
	t, err := tract.Open(os.Getenv("TRACT_BENCH_DB"), tract.WithLockTimeout(time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer t.Close()
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
	ctx := context.Background()
	made := 0
	for ; n == 0 && !stop.Load() || made < n; made++ {
		if _, err := t.User(ctx, fmt.Sprintf("%s message %d", os.Getenv(benchWorkerEnv), made)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println(made)
	return 0
}

// benchWriter is a writer process started by startWriters.
type benchWriter struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// startWriters starts n writer processes on db, each to make commits
// durable commits (0: until stopped), and waits until each has opened the
// repository. go releases them all at once.
func startWriters(b *testing.B, db string, n, commits int) []*benchWriter {
	b.Helper()
	self, err := os.Executable()
	require.NoError(b, err)
	ws := make([]*benchWriter, n)
	for i := range ws {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), benchWorkerEnv+"="+fmt.Sprintf("w%d", i), "TRACT_BENCH_DB="+db,
			"TRACT_BENCH_COMMITS="+strconv.Itoa(commits))
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
		ws[i] = w
	}
	return ws
}

func release(ws []*benchWriter) {
	for _, w := range ws {
		_, _ = io.WriteString(w.in, "go\n")
	}
}

// finish stops the writers (closing their input) and returns the commits
// they made and when the first and the last of them finished.
func finish(b *testing.B, ws []*benchWriter) (total int, first, last time.Time) {
	b.Helper()
	type done struct {
		made int
		at   time.Time
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
			results <- done{made, at, err}
		}()
	}
	for range ws {
		d := <-results
		require.NoError(b, d.err)
		total += d.made
		if first.IsZero() || d.at.Before(first) {
			first = d.at
		}
		last = d.at
	}
	for _, w := range ws {
		require.NoError(b, w.cmd.Wait())
	}
	return total, first, last
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
			db := be.location(b)
			tr, err := tract.Init(db)
			require.NoError(b, err)
			require.NoError(b, tr.Close())
			each := max(b.N/writers, 1)
			ws := startWriters(b, db, writers, each)
			b.ResetTimer()
			start := time.Now()
			release(ws)
			total, first, last := finish(b, ws)
			b.StopTimer()
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "commits/s")
			b.ReportMetric(100*float64(last.Sub(first))/float64(last.Sub(start)), "finish-spread-%")
			b.ReportMetric(0, "ns/op")
		})
	}
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
				ws = startWriters(b, db, 1, 0)
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
				made, _, _ = finish(b, ws)
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
