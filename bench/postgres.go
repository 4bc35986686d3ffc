//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/tractdag/tract/store/postgres"
)

// runVsFile measures tract in the PostgreSQL database of db against tract
// in a file, on the same generated history, alternating the two round by
// round so that both see the same machine (-db URL -vs-file): the
// PostgreSQL backend's cost as a ratio of the file's, which is what its
// targets are stated in.
func runVsFile(n, rounds int, keep bool, db string) error {
	dir, err := os.MkdirTemp("", "tract-bench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	tract := filepath.Join(dir, "tract")
	pg := &bench{dir: dir, tract: tract, db: db}
	file := &bench{dir: dir, tract: tract}
	if _, err := postgres.Migrate(context.Background(), db); err != nil {
		return err
	}
	defer pg.dropAll()
	if err := buildTract(tract); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "generating %d messages…\n", n)
	jsonl := filepath.Join(dir, "history.jsonl")
	if err := generate(n, jsonl, filepath.Join(dir, "history.fi"), filepath.Join(dir, "history.csv")); err != nil {
		return err
	}
	pd, fd := filepath.Join(dir, "p"), filepath.Join(dir, "f")
	var pimp, fimp []sample
	for r := 0; r < rounds; r++ {
		fmt.Fprintf(os.Stderr, "round %d/%d: importing…\n", r+1, rounds)
		for _, side := range []struct {
			b       *bench
			d       string
			samples *[]sample
		}{{pg, pd, &pimp}, {file, fd, &fimp}} {
			os.RemoveAll(side.d)
			if err := side.b.drop(side.d); err != nil {
				return err
			}
			if err := side.b.must(side.d, tract, side.b.args(side.d, "init")...); err != nil {
				return err
			}
			s, err := side.b.time(side.d, jsonl, tract, side.b.args(side.d, "import")...)
			if err != nil {
				return err
			}
			*side.samples = append(*side.samples, s)
		}
	}
	// A tiny repository of each, for the fixed cost of a command.
	pt, ft := filepath.Join(dir, "tiny-p"), filepath.Join(dir, "tiny-f")
	for _, side := range []struct {
		b *bench
		d string
	}{{pg, pt}, {file, ft}} {
		if err := side.b.must(side.d, tract, side.b.args(side.d, "init")...); err != nil {
			return err
		}
		if err := side.b.must(side.d, tract, side.b.args(side.d, "commit", "--role", "user", "-m", "hello")...); err != nil {
			return err
		}
	}
	floorRounds := max(rounds, 21)
	both := func(r int, name, pd, fd string, args ...string) row {
		fmt.Fprintf(os.Stderr, "%s…\n", name)
		var ps, fs []sample
		for i := 0; i < r; i++ {
			s, err := pg.time(pd, "", tract, pg.args(pd, args...)...)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return row{name: name + " (failed)"}
			}
			ps = append(ps, s)
			if s, err = file.time(fd, "", tract, args...); err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return row{name: name + " (failed)"}
			}
			fs = append(fs, s)
		}
		return row{name: name, tract: median(ps), git: median(fs)}
	}
	rows := []row{
		{fmt.Sprintf("import %s", count(n)), median(pimp), median(fimp)},
		both(rounds, "`log --all --oneline`", pd, fd, "log", "--all", "--oneline"),
		both(max(rounds, 11), "`status`", pd, fd, "status"),
		both(max(rounds, 11), "`log -n 10`", pd, fd, "log", "-n", "10"),
		both(floorRounds, "CLI floor: `log -n 1` on a one-commit repository", pt, ft, "log", "-n", "1"),
		both(rounds, "`stats`", pd, fd, "stats"),
		both(rounds, "`fsck`", pd, fd, "fsck"),
		both(rounds, "`gc`", pd, fd, "gc"),
	}
	fmt.Printf("%d messages of about 300 bytes; tract in PostgreSQL (%s) against tract in a file; %s, %d CPUs, %s; medians of %d runs (%d for the floor), the two alternating\n\n",
		n, postgres.Redact(db), runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), rounds, floorRounds)
	fmt.Println("| operation | PostgreSQL | file | ratio |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	return nil
}
