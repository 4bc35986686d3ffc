//go:build unix

// Command bench measures tract beside git on the same generated history and
// prints the side-by-side table of docs/performance.md.
//
//	go run ./bench                 # 100,000 messages, 3 rounds
//	go run ./bench -n 1000000 -rounds 1
//	go run ./bench -n 1000 -generate DIR   # only write the history files
//	go run ./bench -db 'postgres://user@host/db'   # tract's repositories in PostgreSQL
//	go run ./bench -db 'postgres://user@host/db' -vs-file   # PostgreSQL against the file
//	go run ./bench -floor          # only the short commands, 51–101 rounds
//
// It generates n messages of about 300 bytes (a system prompt, then user and
// assistant turns), writes them once as JSON lines for 'tract import' and
// once as a git fast-import stream (one commit per message, the text as the
// commit's only file), imports both, and times the commands of the table:
// wall time and peak resident memory (the child's maxrss), the median over
// the rounds. git runs with glibc's heap trimming turned down, as it is
// slow on some machines. It needs git on PATH and writes only under a
// temporary directory, which it removes.
//
// When sqlite3 is on PATH, it also imports the same messages into SQLite as
// simonw/llm logs them (its conversations and responses tables, a prompt
// and its response a row, and the FTS5 index over them its migrations
// create), with sqlite3's .import, one transaction, and prints that import
// and the database's size beside tract's in a second table.
//
// With -db URL, tract's repositories live in that PostgreSQL database
// instead of in files (each under a repository name of its own, dropped
// at the end; the schema is migrated first), so the table shows what the
// same commands cost on a server; git stays on files. The size row then
// gives the repository's rows as PostgreSQL stores them (tables and
// indexes, shared by every repository of the database). With -vs-file as
// well, it measures tract in the database against tract in a file
// instead, both on the same history, alternating (the ratios the
// PostgreSQL backend's targets are stated in); git is not run.
//
// With -floor, it imports once and times only the short commands
// (status, log -n 10, the floor), at least 51 rounds (101 for the floor):
// their few milliseconds are mostly the start of a process, which a
// busy machine blurs more than it does a walk's seconds.
package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/tractdag/tract/store/postgres"
)

func main() {
	n := flag.Int("n", 100_000, "messages in the generated history")
	rounds := flag.Int("rounds", 3, "runs of each measurement (the median is printed)")
	keep := flag.Bool("keep", false, "keep the temporary directory")
	gen := flag.String("generate", "", "only write the history to `DIR` (history.jsonl, history.fi) and exit")
	db := flag.String("db", "", "keep tract's repositories in the PostgreSQL database of `URL` instead of files")
	vsFile := flag.Bool("vs-file", false, "with -db, measure tract in the database against tract in a file instead of against git")
	floor := flag.Bool("floor", false, "import once and time only the short commands (status, log -n 10, the floor), in more rounds")
	flag.Parse()
	if *gen != "" {
		err := os.MkdirAll(*gen, 0o755)
		if err == nil {
			err = generate(*n, filepath.Join(*gen, "history.jsonl"), filepath.Join(*gen, "history.fi"), filepath.Join(*gen, "history.csv"))
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *vsFile {
		if *db == "" {
			fmt.Fprintln(os.Stderr, "bench: -vs-file needs -db URL")
			os.Exit(2)
		}
		if *floor {
			fmt.Fprintln(os.Stderr, "bench: -floor measures against git; leave out -vs-file")
			os.Exit(2)
		}
	}
	var err error
	if *vsFile {
		err = runVsFile(*n, *rounds, *keep, *db)
	} else {
		err = run(*n, *rounds, *keep, *db, *floor)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// sample is one run of a command.
type sample struct {
	wall time.Duration
	rss  int64 // bytes
}

// measure is the median of a command's runs.
type measure struct {
	sample
	ok bool
}

func run(n, rounds int, keep bool, db string, floor bool) error {
	if _, err := exec.LookPath("git"); err != nil {
		return fmt.Errorf("git is needed to compare with: %w", err)
	}
	dir, err := os.MkdirTemp("", "tract-bench-")
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(os.Stderr, "keeping", dir)
	} else {
		defer os.RemoveAll(dir)
	}
	b := &bench{dir: dir, tract: filepath.Join(dir, "tract"), db: db}
	if db != "" {
		if _, err := postgres.Migrate(context.Background(), db); err != nil {
			return err
		}
		defer b.dropAll()
	}
	fmt.Fprintf(os.Stderr, "building tract and generating %d messages…\n", n)
	if err := buildTract(b.tract); err != nil {
		return err
	}
	jsonl, stream := filepath.Join(dir, "history.jsonl"), filepath.Join(dir, "history.fi")
	if err := generate(n, jsonl, stream, filepath.Join(dir, "history.csv")); err != nil {
		return err
	}
	// SQLite, as llm keeps the same messages, when sqlite3 is installed.
	var sqlite, script string
	if _, err := exec.LookPath("sqlite3"); err == nil && !floor {
		sqlite, script = filepath.Join(dir, "llm.sqlite"), filepath.Join(dir, "llm.sql")
		if err := os.WriteFile(script, []byte(sqliteSchema), 0o644); err != nil {
			return err
		}
	}

	var imp, gimp, simp []sample
	importRounds := rounds
	if floor {
		importRounds = 1
	}
	for r := 0; r < importRounds; r++ {
		fmt.Fprintf(os.Stderr, "round %d/%d: importing…\n", r+1, importRounds)
		td, gd := filepath.Join(dir, "t"), filepath.Join(dir, "g")
		os.RemoveAll(td)
		os.RemoveAll(gd)
		if err := b.drop(td); err != nil {
			return err
		}
		if err := b.must(td, b.tract, b.args(td, "init")...); err != nil {
			return err
		}
		s, err := b.time(td, jsonl, b.tract, b.args(td, "import")...)
		if err != nil {
			return err
		}
		imp = append(imp, s)
		if err := b.must("", "git", "init", "-q", "-b", "main", gd); err != nil {
			return err
		}
		s, err = b.time(gd, stream, "git", "fast-import", "--quiet")
		if err != nil {
			return err
		}
		gimp = append(gimp, s)
		if sqlite != "" {
			os.Remove(sqlite)
			s, err = b.time(dir, script, "sqlite3", sqlite)
			if err != nil {
				return err
			}
			simp = append(simp, s)
		}
	}
	td, gd := filepath.Join(dir, "t"), filepath.Join(dir, "g")
	// The packed size git users see: after git gc (fast-import's pack is
	// not delta-compressed across the whole history).
	if err := b.must(gd, "git", "gc", "-q"); err != nil {
		return err
	}
	var tsize int64
	if db == "" {
		tsize, err = fileSize(filepath.Join(td, ".tract", "tract.db"))
	} else {
		tsize, err = databaseSize(db)
	}
	if err != nil {
		return err
	}
	gsize, err := dirSize(filepath.Join(gd, ".git"))
	if err != nil {
		return err
	}

	// A tiny repository of each, for the fixed cost of a command.
	tt, gt := filepath.Join(dir, "tiny-t"), filepath.Join(dir, "tiny-g")
	if err := b.must(tt, b.tract, b.args(tt, "init")...); err != nil {
		return err
	}
	if err := b.must(tt, b.tract, b.args(tt, "commit", "--role", "user", "-m", "hello")...); err != nil {
		return err
	}
	if err := b.must("", "git", "init", "-q", "-b", "main", gt); err != nil {
		return err
	}
	if err := b.must(gt, "git", "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "--allow-empty", "-m", "hello"); err != nil {
		return err
	}

	// The short commands: the fixed cost of starting a command, opening
	// the repository and reading a few commits.
	floorRounds := max(rounds, 21)
	if floor {
		rounds, floorRounds = max(rounds, 51), max(rounds, 101)
	}
	short := []row{
		b.pair(max(rounds, 11), "`status` / `git log -n 10`", td, gd, []string{"status"}, []string{"log", "-n", "10"}),
		b.pair(max(rounds, 11), "`status` / `git status`", td, gd, []string{"status"}, []string{"status"}),
		b.pair(max(rounds, 11), "`log -n 10` / `git log -n 10`", td, gd, []string{"log", "-n", "10"}, []string{"log", "-n", "10"}),
		b.pair(floorRounds, "CLI floor: `log -n 1` on a one-commit repository", tt, gt, []string{"log", "-n", "1"}, []string{"log", "-1"}),
	}
	var rows []row
	if floor {
		rows = short
	} else {
		rows = append([]row{
			{fmt.Sprintf("import %s (`tract import` / `git fast-import`)", count(n)), median(imp), median(gimp)},
			b.pair(rounds, "`log --all --oneline`", td, gd, []string{"log", "--all", "--oneline"}, []string{"log", "--all", "--oneline"}),
			b.pair(rounds, "`log --all` / `git log --graph --all --oneline`", td, gd, []string{"log", "--all"}, []string{"log", "--graph", "--all", "--oneline"}),
		}, short...)
		rows = append(rows,
			b.pair(rounds, "`log --json` / `git log --format=raw`", td, gd, []string{"log", "--json"}, []string{"log", "--format=raw"}),
			b.pair(rounds, "`log --all --json`", td, gd, []string{"log", "--all", "--json"}, nil),
			b.pair(rounds, "`compile --json`", td, gd, []string{"compile", "--json"}, nil),
			b.pair(rounds, "`fsck` / `git fsck`", td, gd, []string{"fsck"}, []string{"fsck", "--no-dangling"}),
			b.pair(rounds, "`gc` / `git gc`", td, gd, []string{"gc"}, []string{"gc", "-q"}),
		)
	}

	where := "tract in files"
	if db != "" {
		where = "tract in PostgreSQL (" + postgres.Redact(db) + ")"
	}
	fmt.Printf("%d messages of about 300 bytes; %s; %s, %d CPUs, %s; medians of %d runs (%d for the floor)\n\n",
		n, where, runtime.GOOS+"/"+runtime.GOARCH, runtime.NumCPU(), runtime.Version(), rounds, floorRounds)
	fmt.Println("| operation | tract | git | ratio |")
	fmt.Println("|---|---|---|---|")
	for _, r := range rows {
		fmt.Println(r)
	}
	fmt.Printf("| size on disk | %s (%d B/message) | %s packed (%d B/message) | %.2f× |\n",
		mib(tsize), tsize/int64(n), mib(gsize), gsize/int64(n), float64(tsize)/float64(gsize))
	if sqlite == "" {
		return nil
	}
	ssize, err := fileSize(sqlite)
	if err != nil {
		return err
	}
	fmt.Println()
	fmt.Println("| operation | tract | SQLite (llm's tables) | ratio |")
	fmt.Println("|---|---|---|---|")
	fmt.Println(row{fmt.Sprintf("import %s (`tract import` / `sqlite3` `.import`, one transaction)", count(n)), median(imp), median(simp)})
	fmt.Printf("| size on disk | %s (%d B/message) | %s (%d B/message) | %.2f× |\n",
		mib(tsize), tsize/int64(n), mib(ssize), ssize/int64(n), float64(tsize)/float64(ssize))
	return nil
}

// buildTract builds the tract command into path, as the README installs
// it.
func buildTract(path string) error {
	build := exec.Command("go", "build", "-o", path, "./cmd/tract")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build (run from the repository's root): %v\n%s", err, out)
	}
	return nil
}

type row struct {
	name       string
	tract, git measure
}

func (r row) String() string {
	g, ratio := "", ""
	if r.git.ok {
		g = r.git.sample.String()
		ratio = fmt.Sprintf("%.2f× time, %.1f× memory", r.tract.wall.Seconds()/r.git.wall.Seconds(), float64(r.tract.rss)/float64(r.git.rss))
	}
	return fmt.Sprintf("| %s | %s | %s | %s |", r.name, r.tract.sample, g, ratio)
}

func (s sample) String() string {
	return fmt.Sprintf("%s, %s", dur(s.wall), mib(s.rss))
}

type bench struct {
	dir, tract string
	// db is the database's URL with -db; each repository directory then
	// names a repository in it.
	db    string
	repos []string // the repository URLs used, to drop at the end
}

// args returns the arguments of a tract command on the repository of
// directory dir: as they are for a file, after --db URL for a database.
func (b *bench) args(dir string, args ...string) []string {
	if b.db == "" {
		return args
	}
	return append([]string{"--db", b.repoURL(dir)}, args...)
}

// repoURL returns the URL of the repository of directory dir.
func (b *bench) repoURL(dir string) string {
	u, err := url.Parse(b.db)
	if err != nil {
		return b.db // Migrate has parsed it already
	}
	q := u.Query()
	q.Set("repository", fmt.Sprintf("bench-%d-%s", os.Getpid(), filepath.Base(dir)))
	u.RawQuery = q.Encode()
	s := u.String()
	if !slices.Contains(b.repos, s) {
		b.repos = append(b.repos, s)
	}
	return s
}

// drop drops the repository of dir, with -db.
func (b *bench) drop(dir string) error {
	if b.db == "" {
		return nil
	}
	return postgres.Drop(context.Background(), b.repoURL(dir))
}

// dropAll drops every repository used.
func (b *bench) dropAll() {
	for _, r := range b.repos {
		if err := postgres.Drop(context.Background(), r); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
	}
}

// databaseSize returns the size of the tables and indexes that hold
// tract's rows in the database of url.
func databaseSize(dbURL string) (int64, error) {
	server, err := postgres.ServerURL(dbURL)
	if err != nil {
		return 0, err
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return 0, fmt.Errorf("connect to %s: %w", postgres.Redact(dbURL), err)
	}
	defer conn.Close(ctx)
	var size int64
	err = conn.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND c.relname LIKE 'tract\_%' AND n.nspname = current_schema()`).Scan(&size)
	return size, err
}

// pair measures a tract command and, when gitArgs is set, a git command,
// alternating them round by round so both see the same machine.
func (b *bench) pair(rounds int, name, td, gd string, tractArgs, gitArgs []string) row {
	fmt.Fprintf(os.Stderr, "%s…\n", name)
	var ts, gs []sample
	for r := 0; r < rounds; r++ {
		s, err := b.time(td, "", b.tract, b.args(td, tractArgs...)...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return row{name: name + " (failed)"}
		}
		ts = append(ts, s)
		if gitArgs != nil {
			s, err := b.time(gd, "", "git", gitArgs...)
			if err != nil {
				fmt.Fprintln(os.Stderr, "bench:", err)
				return row{name: name + " (git failed)"}
			}
			gs = append(gs, s)
		}
	}
	return row{name: name, tract: median(ts), git: median(gs)}
}

// time runs a command in dir with stdin from the file in (none when empty)
// and stdout discarded, and returns its wall time and peak memory.
func (b *bench) time(dir, in, name string, args ...string) (sample, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=67108864",
		"GIT_AUTHOR_NAME=bench", "GIT_AUTHOR_EMAIL=bench@example.com",
		"GIT_COMMITTER_NAME=bench", "GIT_COMMITTER_EMAIL=bench@example.com",
		"NO_COLOR=1", "GIT_PAGER=cat")
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			return sample{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		shown := make([]string, len(args))
		for i, a := range args {
			shown[i] = postgres.Redact(a) // a --db URL's password
		}
		return sample{}, fmt.Errorf("%s %s: %v\n%s", name, strings.Join(shown, " "), err, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = int64(ru.Maxrss) * 1024 // kilobytes on Linux
		if runtime.GOOS == "darwin" {
			rss = int64(ru.Maxrss) // bytes on macOS
		}
	}
	return sample{wall: wall, rss: rss}, nil
}

// must runs a set-up command in dir (created if missing).
func (b *bench) must(dir, name string, args ...string) error {
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	_, err := b.time(dir, "", name, args...)
	return err
}

func median(ss []sample) measure {
	if len(ss) == 0 {
		return measure{}
	}
	walls := make([]time.Duration, len(ss))
	rsss := make([]int64, len(ss))
	for i, s := range ss {
		walls[i], rsss[i] = s.wall, s.rss
	}
	slices.Sort(walls)
	slices.Sort(rsss)
	return measure{sample: sample{wall: walls[len(ss)/2], rss: rsss[len(ss)/2]}, ok: true}
}

// words are the vocabulary of the generated messages: ordinary English, so
// the texts compress about as well as real conversations do.
var words = strings.Fields(`the a of to and in is it that for you on with as this be are
was have not at or by from but can will your what which an if all we more
one do when there their so about would has they them my some like how then
model answer question json field value return function error test file
data user system assistant message context token summary branch commit
history validate retry schema result output input request response name
time number list string object array because should could must first last
next before after again still only also just very much many each every
other another same different new old good better best small large long
short simple clear exact check please thanks sure here there where why`)

// generate writes n messages as JSON lines, as a git fast-import stream
// and as the rows of llm's responses table in CSV (see sqliteSchema).
func generate(n int, jsonlPath, streamPath, csvPath string) error {
	jf, err := os.Create(jsonlPath)
	if err != nil {
		return err
	}
	defer jf.Close()
	sf, err := os.Create(streamPath)
	if err != nil {
		return err
	}
	defer sf.Close()
	cf, err := os.Create(csvPath)
	if err != nil {
		return err
	}
	defer cf.Close()
	jw, sw, cb := bufio.NewWriterSize(jf, 1<<20), bufio.NewWriterSize(sf, 1<<20), bufio.NewWriterSize(cf, 1<<20)
	cw := csv.NewWriter(cb)
	var system, prompt string
	rng := rand.New(rand.NewPCG(1, 2))
	var text strings.Builder
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	for i := 0; i < n; i++ {
		role := "user"
		switch {
		case i == 0:
			role = "system"
		case i%2 == 0:
			role = "assistant"
		}
		text.Reset()
		fmt.Fprintf(&text, "Message %d.", i+1)
		for text.Len() < 280+rng.IntN(40) {
			text.WriteByte(' ')
			text.WriteString(words[rng.IntN(len(words))])
		}
		text.WriteByte('.')
		fmt.Fprintf(jw, "{\"role\":%q,\"content\":%q}\n", role, text.String())
		fmt.Fprintf(sw, "commit refs/heads/main\nmark :%d\ncommitter bench <bench@example.com> %d +0000\ndata %d\n%s\n", i+1, base+int64(i), len(role), role)
		if i > 0 {
			fmt.Fprintf(sw, "from :%d\n", i)
		}
		fmt.Fprintf(sw, "M 644 inline message.txt\ndata %d\n%s\n\n", text.Len(), text.String())
		// llm keeps a prompt and its response in one row, the system
		// prompt beside them.
		switch role {
		case "system":
			system = text.String()
		case "user":
			prompt = text.String()
		default:
			at := time.Unix(base+int64(i), 0).UTC().Format("2006-01-02T15:04:05")
			if err := cw.Write([]string{fmt.Sprintf("r%08d", i), "m", prompt, system, "", "{}", text.String(), "", "c1", "0", at}); err != nil {
				return err
			}
			system, prompt = "", ""
		}
	}
	if prompt != "" || system != "" {
		if err := cw.Write([]string{fmt.Sprintf("r%08d", n), "m", prompt, system, "", "{}", "", "", "c1", "0", ""}); err != nil {
			return err
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	if err := cb.Flush(); err != nil {
		return err
	}
	if err := jw.Flush(); err != nil {
		return err
	}
	return sw.Flush()
}

// sqliteSchema is llm's log database as it records conversations
// (simonw/llm's tables, with the full-text index its migrations create:
// an FTS5 table over prompt and response, kept by a trigger), then the
// import of the generated rows, which sqlite3's .import runs in one
// transaction.
const sqliteSchema = `CREATE TABLE [conversations] ([id] TEXT PRIMARY KEY, [name] TEXT, [model] TEXT);
CREATE TABLE [responses] ([id] TEXT PRIMARY KEY, [model] TEXT, [prompt] TEXT, [system] TEXT,
  [prompt_json] TEXT, [options_json] TEXT, [response] TEXT, [response_json] TEXT,
  [conversation_id] TEXT REFERENCES [conversations]([id]), [duration_ms] INTEGER, [datetime_utc] TEXT);
CREATE VIRTUAL TABLE [responses_fts] USING FTS5 ([prompt], [response], content=[responses], content_rowid=[rowid]);
CREATE TRIGGER [responses_ai] AFTER INSERT ON [responses] BEGIN
  INSERT INTO [responses_fts] (rowid, [prompt], [response]) VALUES (new.rowid, new.[prompt], new.[response]);
END;
INSERT INTO [conversations] VALUES ('c1', 'bench', 'm');
.mode csv
.import history.csv responses
`

func fileSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += info.Size()
		}
		return err
	})
	return total, err
}

func count(n int) string {
	switch {
	case n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n%1000 == 0:
		return fmt.Sprintf("%dk", n/1000)
	}
	return fmt.Sprint(n)
}

func dur(d time.Duration) string {
	if d < time.Second {
		return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.2f s", d.Seconds())
}

func mib(b int64) string {
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}
