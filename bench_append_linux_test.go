package tract_test

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// appendLogSize is how much of the log BenchmarkSharedAppendBound writes
// before the appends, which wrap around in it: an append then changes no
// file size or extent, so fdatasync writes the record's pages alone.
const appendLogSize = 64 << 20

// BenchmarkSharedAppendBound measures what the disk allows a log shared
// by processes, the design that would let separate processes share a
// sync (see "Concurrent writers" in docs/performance.md): 1 and 8
// processes each append records of 512 bytes (about a message's commit)
// to one file, taking the log's tail from a small file under flock,
// writing the record there, and making it durable with fdatasync outside
// the lock, so that one sync covers every record written before it; b.N
// appends among them. Beside BenchmarkCommitProcessBranches (tract's
// processes, each commit a bbolt transaction of its own, two syncs) and
// BenchmarkBboltUpdateBound, it is the bound such a log would reach.
func BenchmarkSharedAppendBound(b *testing.B) {
	for _, writers := range []int{1, 8} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			log := filepath.Join(b.TempDir(), "log")
			f, err := os.Create(log)
			require.NoError(b, err)
			zeros := make([]byte, 1<<20)
			for off := int64(0); off < appendLogSize; off += int64(len(zeros)) {
				_, err := f.WriteAt(zeros, off)
				require.NoError(b, err)
			}
			require.NoError(b, f.Sync())
			require.NoError(b, f.Close())
			require.NoError(b, os.WriteFile(log+".tail", make([]byte, 8), 0o600))
			each := max(b.N/writers, 1)
			ws := make([]*benchWriter, writers)
			for i := range ws {
				ws[i] = startWorker(b, appendWorkerEnv+"="+log, "TRACT_BENCH_COMMITS="+strconv.Itoa(each))
			}
			b.ResetTimer()
			release(ws)
			total, _, _, lat := finish(b, ws)
			b.StopTimer()
			reportLatencies(b, total, lat)
		})
	}
}

// appendWorker is a process of BenchmarkSharedAppendBound: it opens the
// log TRACT_BENCH_APPEND names and, through workerLoop, appends
// TRACT_BENCH_COMMITS records, each durable before the next.
func appendWorker() int {
	path := os.Getenv(appendWorkerEnv)
	n, _ := strconv.Atoi(os.Getenv("TRACT_BENCH_COMMITS"))
	log, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer log.Close()
	tail, err := os.OpenFile(path+".tail", os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer tail.Close()
	record := make([]byte, 512)
	return workerLoop(n, func(i int) error {
		at, err := takeAppend(tail, int64(len(record)))
		if err != nil {
			return err
		}
		binary.BigEndian.PutUint64(record, uint64(i))
		if _, err := log.WriteAt(record, at); err != nil {
			return err
		}
		return unix.Fdatasync(int(log.Fd()))
	})
}

// takeAppend reserves size bytes at the log's tail, which the first 8
// bytes of tail hold, under tail's flock, and returns where they start
// (from the start again past appendLogSize).
func takeAppend(tail *os.File, size int64) (int64, error) {
	fd := int(tail.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		return 0, err
	}
	defer unix.Flock(fd, unix.LOCK_UN)
	var buf [8]byte
	if _, err := tail.ReadAt(buf[:], 0); err != nil {
		return 0, err
	}
	at := int64(binary.BigEndian.Uint64(buf[:]))
	if at+size > appendLogSize {
		at = 0
	}
	binary.BigEndian.PutUint64(buf[:], uint64(at+size))
	_, err := tail.WriteAt(buf[:], 0)
	return at, err
}
