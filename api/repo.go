package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/export"
	"github.com/tractdag/tract/search"
)

// status answers GET /api/status: 'tract status --json'.
func (s *Server) status(w http.ResponseWriter, r *http.Request) error {
	st, err := s.t.Status(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, st)
}

// branches answers GET /api/branches: 'tract branch --json'.
func (s *Server) branches(w http.ResponseWriter, r *http.Request) error {
	bs, err := s.t.Branches(r.Context())
	if err != nil {
		return err
	}
	if bs == nil {
		bs = []tract.Branch{}
	}
	return writeJSON(w, bs)
}

// show answers GET /api/commits/REV: 'tract show --json REV'.
func (s *Server) show(w http.ResponseWriter, r *http.Request) error {
	rev := r.PathValue("rev")
	if rev == "" {
		return badRequest(CodeBadRevision, "/api/commits/REV needs a revision: a hash (4 to 64 hex digits), a branch, HEAD, REV~N")
	}
	c, err := s.t.Show(r.Context(), rev)
	if err != nil {
		return err
	}
	return writeJSON(w, c)
}

// compile answers GET /api/compile?rev=REV: 'tract compile --json'.
func (s *Server) compile(w http.ResponseWriter, r *http.Request) error {
	var opts []tract.CompileOption
	if rev := r.URL.Query().Get("rev"); rev != "" {
		// Resolved first, so that a bad revision is a 4xx before the
		// array starts.
		if _, err := s.t.Resolve(r.Context(), rev); err != nil {
			return err
		}
		opts = append(opts, tract.CompileAt(rev))
	}
	msgs := []tract.Message{}
	for m, err := range s.t.CompileSeq(r.Context(), opts...) {
		if err != nil {
			return err
		}
		msgs = append(msgs, m)
	}
	return writeJSON(w, msgs)
}

// reflog answers GET /api/reflog?ref=REF&limit=N&cursor=C: the array
// 'tract reflog --json REF' prints, newest first, a page at a time (see
// HeaderNext); the cursor is the index (REF@{N}) the next page starts at.
func (s *Server) reflog(w http.ResponseWriter, r *http.Request) error {
	n, from, err := offsetPage(r)
	if err != nil {
		return err
	}
	es, err := s.t.Reflog(r.Context(), r.URL.Query().Get("ref"), tract.ReflogLimit(from+n+1))
	if err != nil {
		return err
	}
	return writePage(w, r, es, from, n)
}

// HeaderNext carries the cursor of the next page of a route whose body
// is an array (reflog, events), which has no room for a "next" field;
// a Link header (rel="next") gives the next page's URL too.
const HeaderNext = "X-Tract-Next"

// setNext announces the next page of a route that answers an array.
func setNext(w http.ResponseWriter, r *http.Request, cursor string) {
	u := *r.URL
	q := u.Query()
	q.Set("cursor", cursor)
	u.RawQuery = q.Encode()
	w.Header().Set(HeaderNext, cursor)
	w.Header().Set("Link", "<"+u.RequestURI()+">; rel=\"next\"")
}

// offsetPage reads the limit and the cursor of a route whose cursor is
// a position (reflog, events).
func offsetPage(r *http.Request) (n, from int, err error) {
	if n, err = limit(r); err != nil {
		return 0, 0, err
	}
	from, err = offsetCursor(r)
	return n, from, err
}

// offsetCursor reads a cursor that is a position: a whole number.
func offsetCursor(r *http.Request) (int, error) {
	v := r.URL.Query().Get("cursor")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest(CodeBadCursor, "cursor %q: pass the \"next\" of the page before, or leave cursor out for the first page", v)
	}
	return n, nil
}

// events answers GET /api/events?task=T&since=S&limit=N&cursor=C: the
// objects 'tract events --json' prints, as an array, oldest first, a
// page at a time (see HeaderNext).
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	n, from, err := offsetPage(r)
	if err != nil {
		return err
	}
	at, err := since(r, time.Now())
	if err != nil {
		return err
	}
	all, err := s.allEvents(r.Context())
	if err != nil {
		return err
	}
	task := r.URL.Query().Get("task")
	evs := all
	if task != "" || !at.IsZero() {
		// As tract.EventFilter keeps them: every event of a turn carries
		// the turn's task id.
		evs = nil
		for _, e := range all {
			if (task == "" || e.TaskID == task) && (at.IsZero() || !e.Timestamp.Before(at)) {
				evs = append(evs, e)
			}
		}
	}
	return writePage(w, r, evs, from, n)
}

// writePage answers the n items of all from position from (an empty
// array past the end), with the next page's cursor in HeaderNext when
// all holds more.
func writePage[T any](w http.ResponseWriter, r *http.Request, all []T, from, n int) error {
	page := []T{}
	if from < len(all) {
		page = all[from:min(from+n, len(all))]
	}
	if len(all) > from+n {
		setNext(w, r, strconv.Itoa(from+n))
	}
	return writeJSON(w, page)
}

// eventsCache keeps the events of every validated turn, regenerated
// from the commits (tract.Events), until a ref moves: a page of events
// then reads no commit.
type eventsCache struct {
	mu  sync.Mutex // guards key and evs; held while they are read
	key string
	evs []tract.Event
}

// allEvents returns every event, oldest first.
func (s *Server) allEvents(ctx context.Context) ([]tract.Event, error) {
	key, err := refsKey(ctx, s.t)
	if err != nil {
		return nil, err
	}
	c := &s.eventsCache
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.evs != nil && c.key == key {
		return c.evs, nil
	}
	evs, err := s.t.Events(ctx, tract.EventFilter{})
	if err != nil {
		return nil, err
	}
	c.key, c.evs = key, evs
	return evs, nil
}

// stats answers GET /api/stats?task=PREFIX&since=S: 'tract stats --json'.
func (s *Server) stats(w http.ResponseWriter, r *http.Request) error {
	at, err := since(r, time.Now())
	if err != nil {
		return err
	}
	st, err := s.t.Stats(r.Context(), tract.StatsFilter{TaskPrefix: r.URL.Query().Get("task"), Since: at})
	if err != nil {
		return err
	}
	return writeJSON(w, st)
}

// searchResult is the object of 'tract search --json'.
type searchResult struct {
	Query   string              `json:"query"`
	Commits []*tract.CommitInfo `json:"commits"`
}

// search answers GET /api/search?q=QUERY&limit=N: 'tract search --json'.
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	n, err := limit(r)
	if err != nil {
		return err
	}
	raw := r.URL.Query().Get("q")
	q, err := search.ParseQuery(raw)
	switch {
	case errors.Is(err, search.ErrEmptyQuery):
		return badRequest(CodeBadRequest, "q=%q: the query has no word to find (words are letters and digits)", raw)
	case errors.Is(err, search.ErrTooManyTerms):
		return badRequest(CodeBadRequest, "q=%q: a query has at most %d words", raw, search.MaxTerms)
	case err != nil:
		return err
	}
	out := searchResult{Query: q.String(), Commits: []*tract.CommitInfo{}}
	for c, err := range s.t.Search(r.Context(), q, tract.SearchLimit(n)) {
		if err != nil {
			return err
		}
		out.Commits = append(out.Commits, c)
	}
	return writeJSON(w, out)
}

// export answers GET /api/export?format=F&rev=REV|all=1|branch=B…&task=T:
// 'tract export' to the response, one JSON object a line, as it reads.
func (s *Server) export(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := export.OpenAI
	if v := q.Get("format"); v != "" {
		var err error
		if f, err = export.ParseFormat(v); err != nil {
			return badRequest(CodeBadRequest, "format=%q: %v", v, err)
		}
	}
	all, err := flag(r, "all")
	if err != nil {
		return err
	}
	var opts []tract.ExportOption
	rev, branches := q.Get("rev"), q["branch"]
	switch {
	case all && (rev != "" || len(branches) > 0), rev != "" && len(branches) > 0:
		return badRequest(CodeBadRequest, "give one of all=1, rev=REV or branch=NAME (repeatable), not several")
	case all:
		opts = append(opts, tract.ExportAll())
	case rev != "":
		if _, err := s.t.Resolve(r.Context(), rev); err != nil {
			return err
		}
		opts = append(opts, tract.ExportRev(rev))
	case len(branches) > 0:
		opts = append(opts, tract.ExportBranches(branches...))
	}
	if task := q.Get("task"); task != "" {
		opts = append(opts, tract.ExportTask(task))
	}
	sw := &startWriter{w: w}
	_, err = s.t.Export(r.Context(), sw, f, opts...)
	if err != nil && !sw.started {
		return err
	}
	if err != nil {
		// The status is sent: the client sees a cut stream, and a line
		// that says why.
		_, _ = fmt.Fprintf(w, "{\"error\":{\"message\":%q,\"code\":%q}}\n", err.Error(), CodeInternal)
	}
	if !sw.started {
		sw.start()
	}
	return nil
}

// startWriter sends the export's headers with its first byte, so that an
// error before it is still answered with its own status.
type startWriter struct {
	w       http.ResponseWriter
	started bool
}

func (sw *startWriter) start() {
	sw.started = true
	sw.w.Header().Set("Content-Type", "application/x-ndjson")
	sw.w.Header().Set("X-Content-Type-Options", "nosniff")
	sw.w.Header().Set("Cache-Control", "no-store")
	sw.w.WriteHeader(http.StatusOK)
}

func (sw *startWriter) Write(p []byte) (int, error) {
	if !sw.started {
		sw.start()
	}
	return sw.w.Write(p)
}

var _ io.Writer = (*startWriter)(nil)
