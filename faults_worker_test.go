//go:build linux

package tract_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/tractdag/tract"
)

// faultWorkerEnv, when set, makes the test binary a worker process for the
// fault tests instead of running tests: it reads a faultTask (JSON) from
// the variable, runs it against a repository the test prepared, and
// prints a faultResult (JSON). It is checked in init, before TestMain, so
// that the worker needs nothing of the test harness.
const faultWorkerEnv = "TRACT_FAULT_WORKER"

func init() {
	if task := os.Getenv(faultWorkerEnv); task != "" {
		os.Exit(faultWorker(task))
	}
}

// faultTask is what a worker does.
type faultTask struct {
	DB string `json:"db"`
	// Limit, when positive, is the file size limit (RLIMIT_FSIZE) the
	// worker sets on itself before the operations, with SIGXFSZ ignored:
	// a write past it fails with EFBIG, as on a full disk.
	Limit int64 `json:"limit"`
	// Ops are the operations to run, in order (see faultOps).
	Ops []string `json:"ops"`
	// Recover lifts the limit after the operations and commits once more,
	// in the same process (and, likely, the same open of the file).
	Recover bool `json:"recover"`
}

// faultResult is what a worker reports.
type faultResult struct {
	Ops []faultOpResult `json:"ops"`
	// Log is HEAD's history as the worker read it after the operations.
	Log []tract.Hash `json:"log"`
	// Recovered is the commit made after the limit was lifted.
	Recovered  tract.Hash `json:"recovered,omitzero"`
	RecoverErr string     `json:"recover_err,omitempty"`
}

type faultOpResult struct {
	Op string `json:"op"`
	// Acked are the commits the operation acknowledged (for "commits",
	// each of the commits it made before one failed).
	Acked []tract.Hash `json:"acked"`
	Err   string       `json:"err,omitempty"`
	// EFBIG, ReadOnly and NotRepository say whether errors.Is holds for
	// the error and syscall.EFBIG, tract.ErrReadOnly, tract.ErrNotRepository.
	EFBIG         bool `json:"efbig"`
	ReadOnly      bool `json:"read_only"`
	NotRepository bool `json:"not_repository"`
}

// faultOps are the operations a worker can run: each returns the commits
// it acknowledged and its error. The large ones write megabytes, more
// than the limits the tests set leave room for.
var faultOps = map[string]func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error){
	// commits commits 16 KiB messages one by one until one fails.
	"commits": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		var acked []tract.Hash
		for i := range 2000 {
			h, err := t.User(ctx, faultText("commit", i, 16<<10))
			if err != nil {
				return acked, err
			}
			acked = append(acked, h)
		}
		return acked, errors.New("the limit was never reached")
	},
	// commit commits one message larger than the free pages of a small
	// repository: its journal record needs the file to grow.
	"commit": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		h, err := t.User(ctx, faultText("commit", 0, 32<<10))
		return hashList(h, err)
	},
	// commit-many commits 4 MiB in one transaction.
	"commit-many": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		return t.CommitMany(ctx, faultMessages("many", 256, 16<<10))
	},
	"commit-many-small": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		return t.CommitMany(ctx, faultMessages("many", 3, 100))
	},
	// import-pack imports 8 MiB in batches of 256 KiB: its sort runs
	// are small, and the pack the batches go into grows past the limit.
	"import-pack": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		res, err := t.ImportSeq(ctx, importSeq(faultMessages("import", 512, 16<<10)), tract.ImportBatch(16, 256<<10))
		return hashList(res.Tip, err)
	},
	// import-run imports 8 MiB sorted in runs of 4 MiB, the first of
	// which grows past the limit before anything is written to the
	// repository.
	"import-run": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		res, err := t.ImportSeq(ctx, importSeq(faultMessages("import", 512, 16<<10)), tract.ImportBatch(64, 4<<20))
		return hashList(res.Tip, err)
	},
	"import-small": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		return hashList(t.Import(ctx, faultMessages("import", 3, 100)))
	},
	// compress replaces most of the chain with one 1 MiB summary.
	"compress": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		res, err := t.CompressRange(ctx, "HEAD~100", "HEAD~2", tract.Summaries(faultText("summary", 0, 1<<20)))
		if err != nil {
			return nil, err
		}
		return []tract.Hash{res.NewHead}, nil
	},
	"compress-small": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		res, err := t.CompressRange(ctx, "HEAD~3", "HEAD~1", tract.Summaries("a short summary"))
		if err != nil {
			return nil, err
		}
		return []tract.Hash{res.NewHead}, nil
	},
	"gc": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		_, err := t.GC(ctx, tract.GCExpiry(0))
		return nil, err
	},
	"reset-soft": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		_, err := t.Reset(ctx, "HEAD~1", tract.Soft)
		return nil, err
	},
	"reset-hard": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		_, err := t.Reset(ctx, "HEAD~10", tract.Hard)
		return nil, err
	},
	"branch": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		return hashList(t.CreateBranch(ctx, "fault-branch", ""))
	},
	"checkout": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		_, err := t.Checkout(ctx, "HEAD~1")
		return nil, err
	},
	"compact": func(ctx context.Context, t *tract.Tract) ([]tract.Hash, error) {
		_, err := t.Compact(ctx)
		return nil, err
	},
}

func hashList(h tract.Hash, err error) ([]tract.Hash, error) {
	if err != nil {
		return nil, err
	}
	return []tract.Hash{h}, nil
}

// faultWorker runs a task and prints its result; it returns the process's
// exit code: 0 when the task ran (whatever its operations returned), 2
// when it could not.
func faultWorker(spec string) int {
	var task faultTask
	if err := json.Unmarshal([]byte(spec), &task); err != nil {
		fmt.Fprintln(os.Stderr, "fault worker:", err)
		return 2
	}
	ctx := context.Background()
	t, err := tract.Open(task.DB, tract.WithLockTimeout(time.Minute))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fault worker:", err)
		return 2
	}
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Fprintln(os.Stderr, "fault worker:", err)
		return 2
	}
	if task.Limit > 0 {
		signal.Ignore(syscall.SIGXFSZ)
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: uint64(task.Limit), Max: lim.Max}); err != nil {
			fmt.Fprintln(os.Stderr, "fault worker:", err)
			return 2
		}
	}
	var res faultResult
	for _, name := range task.Ops {
		op := faultOps[name]
		if op == nil {
			fmt.Fprintln(os.Stderr, "fault worker: no operation", name)
			return 2
		}
		acked, err := op(ctx, t)
		r := faultOpResult{Op: name, Acked: acked}
		if err != nil {
			r.Err = err.Error()
			r.EFBIG = errors.Is(err, syscall.EFBIG)
			r.ReadOnly = errors.Is(err, tract.ErrReadOnly)
			r.NotRepository = errors.Is(err, tract.ErrNotRepository)
		}
		res.Ops = append(res.Ops, r)
	}
	if log, err := t.Log(ctx); err == nil {
		for _, c := range log {
			res.Log = append(res.Log, c.Hash)
		}
	}
	if task.Recover {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "fault worker:", err)
			return 2
		}
		h, err := t.User(ctx, "after the disk had room again")
		res.Recovered = h
		if err != nil {
			res.RecoverErr = err.Error()
		}
	}
	if err := t.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "fault worker: close:", err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "fault worker:", err)
		return 2
	}
	return 0
}
