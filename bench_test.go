package tract_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/retry"
)

// benchTract opens a fresh repository; durable selects fsync after each
// transaction (the default) instead of the no-sync mode of tests.
func benchTract(b *testing.B, durable bool) *tract.Tract {
	b.Helper()
	opts := []tract.Option{}
	if !durable {
		opts = append(opts, tract.WithNoSync())
	}
	tr, err := tract.Init(filepath.Join(b.TempDir(), "tract.db"), opts...)
	require.NoError(b, err)
	b.Cleanup(func() { tr.Close() })
	return tr
}

// chain returns n import messages alternating user and assistant, each of
// roughly size bytes.
func chain(n, size int, tag string) []tract.ImportMessage {
	msgs := make([]tract.ImportMessage, n)
	pad := strings.Repeat("x", max(size-24, 0))
	for i := range msgs {
		role := tract.RoleUser
		if i%2 == 1 {
			role = tract.RoleAssistant
		}
		msgs[i] = tract.ImportMessage{Role: role, Content: fmt.Sprintf("%s %08d %s", tag, i, pad)}
	}
	return msgs
}

// BenchmarkCommitDurable measures single commits, one durable transaction
// each (target on a file: at least 5,000 commits/s), on a file and on
// PostgreSQL (see onBackends).
func BenchmarkCommitDurable(b *testing.B) {
	onBackends(b, true, func(b *testing.B, be benchBackend) { benchCommits(b, be.init(b, true)) })
}

// benchCommits makes b.N single commits on tr and reports their rate.
func benchCommits(b *testing.B, tr *tract.Tract) {
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.User(ctx, fmt.Sprintf("message %d", i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "commits/s")
}

// BenchmarkImportBulk measures the bulk path: 100,000 commits in one
// transaction (target on a file: at least 100,000 commits/s), and the
// file's size per message afterwards, on a file and on PostgreSQL.
func BenchmarkImportBulk(b *testing.B) {
	const n = 100_000
	msgs := chain(n, 100, "bulk")
	onBackends(b, false, func(b *testing.B, be benchBackend) {
		ctx := context.Background()
		var size int64
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tr := be.init(b, true)
			b.StartTimer()
			if _, err := tr.Import(ctx, msgs); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if be.isFile() {
				st, err := os.Stat(tr.Path())
				require.NoError(b, err)
				size = st.Size()
			}
			b.StartTimer()
		}
		b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "commits/s")
		if be.isFile() {
			b.ReportMetric(float64(size)/n, "file-bytes/message")
		}
	})
}

// manyBranches gives tr 20,000 branches of a commit each, as a server
// that records each conversation on a branch of its own makes.
func manyBranches(b *testing.B, tr *tract.Tract) *tract.Tract {
	for i := range 20_000 {
		_, err := tr.CommitChainOn(context.Background(), fmt.Sprintf("serve/c%05d", i), tract.Hash{}, []tract.ImportMessage{{Role: tract.RoleUser, Content: fmt.Sprintf("conversation %d", i)}})
		require.NoError(b, err)
	}
	return tr
}

// BenchmarkLog_ManyBranches reads the last 10 commits of a branch among
// 20,000 (see manyBranches): each log names the refs of the commits it
// shows, so it reads every ref once.
func BenchmarkLog_ManyBranches(b *testing.B) {
	tr := manyBranches(b, benchTract(b, false))
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		n := 0
		for _, err := range tr.LogSeq(ctx, tract.LogFrom("serve/c00042"), tract.LogLimit(10)) {
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1 {
			b.Fatalf("got %d commits", n)
		}
	}
}

// onManyBranches runs op b.N times among 20,000 branches (see
// manyBranches), on a file and on PostgreSQL.
func onManyBranches(b *testing.B, op func(ctx context.Context, tr *tract.Tract) error) {
	onBackends(b, false, func(b *testing.B, be benchBackend) {
		tr := manyBranches(b, be.init(b, false))
		ctx := context.Background()
		b.ResetTimer()
		for range b.N {
			if err := op(ctx, tr); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLogAll_ManyBranches is LogAll (log --all, the web view's
// graph) among 20,000 branches: every ref is a tip, and every reflog is
// read for the entries that orphaned commits.
func BenchmarkLogAll_ManyBranches(b *testing.B) {
	onManyBranches(b, func(ctx context.Context, tr *tract.Tract) error {
		h, err := tr.LogAll(ctx)
		if err == nil && len(h.Commits) != 20_000 {
			err = fmt.Errorf("got %d commits", len(h.Commits))
		}
		return err
	})
}

// BenchmarkGC_ManyBranches is a gc with nothing to delete among 20,000
// branches: every ref is a tip, and every reflog is read for the commits
// its entries protect and for the entries that expired.
func BenchmarkGC_ManyBranches(b *testing.B) {
	onManyBranches(b, func(ctx context.Context, tr *tract.Tract) error {
		rm, err := tr.GC(ctx)
		if err == nil && (rm.Commits != 0 || rm.ReflogEntries != 0) {
			err = fmt.Errorf("removed %+v", rm)
		}
		return err
	})
}

// BenchmarkLogAll measures LogAll over 100,000 commits of which 1,000 are
// orphans in 100 chains (target on a file: under 300 ms), on a file and
// on PostgreSQL.
func BenchmarkLogAll(b *testing.B) {
	onBackends(b, false, func(b *testing.B, be benchBackend) {
		tr := be.init(b, false)
		ctx := context.Background()
		_, err := tr.Import(ctx, chain(49_500, 100, "main"))
		require.NoError(b, err)
		for c := 0; c < 100; c++ {
			_, err := tr.Import(ctx, chain(10, 100, fmt.Sprintf("orphan-%d", c)))
			require.NoError(b, err)
			_, err = tr.Reset(ctx, "HEAD~10", tract.Soft)
			require.NoError(b, err)
			_, err = tr.Import(ctx, chain(490, 100, fmt.Sprintf("main-%d", c)))
			require.NoError(b, err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			h, err := tr.LogAll(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if len(h.Commits) != 98_500 || len(h.Orphans) != 100 {
				b.Fatalf("got %d reachable, %d orphan chains", len(h.Commits), len(h.Orphans))
			}
		}
	})
}

// BenchmarkCompileCold compiles a 10,000-message chain with nothing cached
// (a fresh process; target on a file: under 10 ms), on a file and on
// PostgreSQL.
func BenchmarkCompileCold(b *testing.B) {
	onBackends(b, false, func(b *testing.B, be benchBackend) {
		path := be.location(b)
		tr, err := tract.Init(path, tract.WithNoSync())
		require.NoError(b, err)
		_, err = tr.Import(context.Background(), chain(10_000, 200, "m"))
		require.NoError(b, err)
		require.NoError(b, tr.Close())
		tr, err = tract.Open(path)
		require.NoError(b, err)
		defer tr.Close()
		compileCold(b, tr, 10_000)
	})
}

// BenchmarkCompileColdRecords is BenchmarkCompileCold on a chain whose
// last commit a validated turn made, so that it has compiled-context
// records: what a new `tract chat` process reads, at 10,000 and 100,000
// messages of 200 bytes, on a file and on PostgreSQL.
func BenchmarkCompileColdRecords(b *testing.B) {
	onBackends(b, false, func(b *testing.B, be benchBackend) {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
				ctx := context.Background()
				path := be.location(b)
				tr, err := tract.Init(path, tract.WithNoSync(), tract.WithClient(chatConstClient(`{"ok":true}`)))
				require.NoError(b, err)
				_, err = tr.Import(ctx, chain(n-2, 200, "m"))
				require.NoError(b, err)
				_, err = tr.Chat(ctx, "one more", tract.Validate(retry.JSON()))
				require.NoError(b, err)
				require.NoError(b, tr.Close())
				tr, err = tract.Open(path)
				require.NoError(b, err)
				defer tr.Close()
				compileCold(b, tr, n)
			})
		}
	})
}

// compileCold times Compile of tr's chain of n messages, dropping the
// caches before each.
func compileCold(b *testing.B, tr *tract.Tract, n int) {
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.DropCaches()
		msgs, err := tr.Compile(ctx)
		if err != nil || len(msgs) != n {
			b.Fatal(err, len(msgs))
		}
	}
}

// BenchmarkCompileAfterAppend appends one commit to an already compiled
// 10,000-message chain and compiles again: only the new commit is read.
func BenchmarkCompileAfterAppend(b *testing.B) {
	tr := benchTract(b, false)
	ctx := context.Background()
	_, err := tr.Import(ctx, chain(10_000, 200, "m"))
	require.NoError(b, err)
	_, err = tr.Compile(ctx)
	require.NoError(b, err)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if _, err := tr.User(ctx, fmt.Sprintf("one more %d", i)); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := tr.Compile(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileHeap compiles 100,000 messages of 200 bytes from a cold
// cache and reports the peak heap growth as a multiple of the text size
// (target: under 3x).
func BenchmarkCompileHeap(b *testing.B) {
	const n, size = 100_000, 200
	tr := benchTract(b, false)
	ctx := context.Background()
	_, err := tr.Import(ctx, chain(n, size, "m"))
	require.NoError(b, err)
	textSize := float64(n * size)
	var worst float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr.DropCaches()
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		peak := make(chan uint64)
		stop := make(chan struct{})
		go samplePeak(before.HeapAlloc, stop, peak)
		msgs, err := tr.Compile(ctx)
		close(stop)
		p := <-peak
		if err != nil || len(msgs) != n {
			b.Fatal(err, len(msgs))
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if after.HeapAlloc > p {
			p = after.HeapAlloc
		}
		worst = max(worst, float64(p-before.HeapAlloc)/textSize)
		runtime.KeepAlive(msgs)
	}
	b.ReportMetric(worst, "peak-heap/text")
}

// samplePeak polls HeapAlloc until stop closes and sends the highest value.
func samplePeak(base uint64, stop <-chan struct{}, out chan<- uint64) {
	peak := base
	var ms runtime.MemStats
	for {
		select {
		case <-stop:
			out <- peak
			return
		case <-time.After(200 * time.Microsecond):
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
}

// BenchmarkCommitManyDurable measures an agent logging distinct messages
// of about 300 bytes in durable batches of 10, 100 and 1,000 with
// CommitMany (target: at least 50,000 messages/s).
func BenchmarkCommitManyDurable(b *testing.B) {
	for _, size := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			tr := benchTract(b, true)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.CommitMany(ctx, chain(size, 300, fmt.Sprintf("batch %d", i))); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "messages/s")
		})
	}
}

// BenchmarkCommitNoSync measures a commit with no sync at all: its CPU
// time and the page writes it hands the kernel, to set beside
// BenchmarkBboltUpdateBound's nosync cases (what bbolt alone spends on an
// update that writes the same pages).
func BenchmarkCommitNoSync(b *testing.B) { benchCommits(b, benchTract(b, false)) }

// BenchmarkBboltUpdateBound measures bbolt alone: durable Updates that
// each put one small key into each of n buckets already holding 20,000
// keys (so each put dirties its own page), on a file held open the whole
// time. pages=0 is an empty Update (bbolt still writes its freelist and
// meta page, with its two syncs); pages=1 is the bound a durable Commit
// (BenchmarkCommitDurable) is measured against. A tract commit dirties two
// places (its journal record and the branch ref); before the journal it
// dirtied six (its blob, its commit and counters, the branch ref, two
// reflog entries, and the bucket holding the reflogs): pages=6 is bbolt's
// cost for that much. The nosync cases are the same Updates without the
// syncs: bbolt's CPU time and page writes (BenchmarkCommitNoSync is a
// commit's).
func BenchmarkBboltUpdateBound(b *testing.B) {
	for _, nosync := range []bool{false, true} {
		for _, n := range []int{0, 1, 6} {
			name := fmt.Sprintf("pages=%d", n)
			if nosync {
				name += "/nosync"
			}
			b.Run(name, func(b *testing.B) { benchBboltUpdate(b, n, nosync) })
		}
	}
}

func benchBboltUpdate(b *testing.B, n int, nosync bool) {
	update := boundDB(b, n, nosync)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := update(i); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}

// boundDB opens a bbolt file of n buckets of 20,000 keys each (closed when
// b ends) and returns the update of BenchmarkBboltUpdateBound: its i-th
// puts one new key into each bucket.
func boundDB(b *testing.B, n int, nosync bool) (update func(i int) error) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "bbolt.db"), 0o600, &bolt.Options{NoSync: nosync})
	require.NoError(b, err)
	b.Cleanup(func() { db.Close() })
	key := func(i int) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)*104729%1_000_003) }
	require.NoError(b, db.Update(func(tx *bolt.Tx) error {
		for k := range n {
			bk, err := tx.CreateBucket([]byte{byte(k)})
			if err != nil {
				return err
			}
			for i := range 20_000 {
				if err := bk.Put(key(i), make([]byte, 100)); err != nil {
					return err
				}
			}
		}
		return nil
	}))
	return func(i int) error {
		return db.Update(func(tx *bolt.Tx) error {
			for k := range n {
				if err := tx.Bucket([]byte{byte(k)}).Put(key(20_000+i), []byte("x")); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// BenchmarkCommitGoroutines measures durable single commits made by 1
// and 8 goroutines sharing one handle, each on a branch of its own (a
// view from OnBranch), every commit its own Commit call: the rate of all
// of them together and the latency of one commit (p50, p99). On a file,
// concurrent writes of a handle are grouped into one transaction and one
// sync (see "Concurrent writes" in docs/storage.md).
func BenchmarkCommitGoroutines(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("goroutines=%d", n), func(b *testing.B) {
			tr := benchTract(b, true)
			ctx := context.Background()
			_, err := tr.User(ctx, "root")
			require.NoError(b, err)
			views := make([]*tract.Tract, n)
			for i := range views {
				name := fmt.Sprintf("agent-%d", i)
				_, err := tr.CreateBranch(ctx, name, "")
				require.NoError(b, err)
				views[i] = tr.OnBranch(name)
			}
			each := max(b.N/n, 1)
			lat := make([][]time.Duration, n)
			errs := make(chan error, n)
			b.ResetTimer()
			for i, v := range views {
				go func() {
					ls := make([]time.Duration, 0, each)
					for j := range each {
						start := time.Now()
						if _, err := v.User(ctx, fmt.Sprintf("agent %d message %d", i, j)); err != nil {
							errs <- err
							return
						}
						ls = append(ls, time.Since(start))
					}
					lat[i] = ls
					errs <- nil
				}()
			}
			for range views {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			reportLatencies(b, each*n, slices.Concat(lat...))
		})
	}
}

// reportLatencies reports the rate of made commits over the benchmark's
// time and the 50th and 99th percentiles of their latencies.
func reportLatencies(b *testing.B, made int, lat []time.Duration) {
	b.ReportMetric(float64(made)/b.Elapsed().Seconds(), "commits/s")
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	}
	b.ReportMetric(0, "ns/op")
}
