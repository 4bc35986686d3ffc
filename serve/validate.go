package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tractdag/tract"
	"github.com/tractdag/tract/dag"
	"github.com/tractdag/tract/llm"
	"github.com/tractdag/tract/retry"
	"github.com/tractdag/tract/turn"
)

// Headers of validation on request (see docs/proxy.md).
const (
	// HeaderValidate names a validator the answer must pass, as a spec
	// of the Handler's parser ("json", "maxlen:200", "schema:PATH", …);
	// repeat the header for several, one spec each. A request with one
	// is answered by a validated turn: steering, retries and purify.
	HeaderValidate = "X-Tract-Validate"
	// HeaderMaxAttempts bounds a validated request's attempts, the first
	// included.
	HeaderMaxAttempts = "X-Tract-Max-Attempts"
	// HeaderTask records a task id on every commit of a validated turn.
	HeaderTask = "X-Tract-Task"
	// HeaderAttempts is, on the response to a validated request, the
	// number of answers the model gave.
	HeaderAttempts = "X-Tract-Attempts"
)

// MaxAttemptsLimit is the most attempts a request may ask for with
// HeaderMaxAttempts.
const MaxAttemptsLimit = 20

// StatusExhausted is the status of a validated request whose attempts
// all failed validation.
const StatusExhausted = http.StatusUnprocessableEntity

// WithValidators sets the parser of validator specs (default: one of
// retry's built-in kinds) and the options every spec is parsed with (a
// base directory for schema paths, a timeout for commands, …). An "llm:"
// spec is judged by the request's own upstream and model.
func WithValidators(p *retry.SpecParser, opts ...retry.SpecOption) Option {
	return func(c *config) { c.parser, c.specOpts = p, opts }
}

// WithDefaultValidation validates every model call that names no
// validator of its own (HeaderValidate) with specs, in at most
// maxAttempts attempts (0: the turn's default) unless HeaderMaxAttempts
// says otherwise. New refuses a spec the parser refuses.
func WithDefaultValidation(specs []string, maxAttempts int) Option {
	return func(c *config) { c.defaultSpecs, c.defaultAttempts = specs, maxAttempts }
}

// WithHeaderCommands lets a request's HeaderValidate name "cmd:"
// validators, which run commands on the server's machine. Without it
// only the defaults (WithDefaultValidation) may: whoever can reach the
// proxy could otherwise run any command.
func WithHeaderCommands() Option { return func(c *config) { c.headerCommands = true } }

// validation is what a request asks to be validated with.
type validation struct {
	specs       []string
	maxAttempts int
	task        string
	hasTask     bool
	// fromHeader is set when the specs are the request's own.
	fromHeader bool
}

// checkDefaults refuses default specs the parser refuses, and a bad
// default number of attempts.
func (h *Handler) checkDefaults(specs []string, maxAttempts int) error {
	if maxAttempts < 0 {
		return fmt.Errorf("serve: max attempts %d: want 1 or more", maxAttempts)
	}
	if len(specs) == 0 {
		return nil
	}
	noJudge := func(context.Context, string) (string, error) { return "", errors.New("no judge") }
	if _, err := h.parser.ParseAll(specs, append(h.specOpts, retry.WithJudge(noJudge))...); err != nil {
		return fmt.Errorf("serve: default validation: %w", err)
	}
	return nil
}

// validationOf reads a request's validation headers, or the defaults;
// nil when the request is not to be validated.
func (h *Handler) validationOf(r *http.Request) (*validation, error) {
	var specs []string
	for _, v := range r.Header.Values(HeaderValidate) {
		if v = strings.TrimSpace(v); v != "" {
			specs = append(specs, v)
		}
	}
	fromHeader := len(specs) > 0
	if !fromHeader {
		specs = h.defaultSpecs
	}
	attempts := strings.TrimSpace(r.Header.Get(HeaderMaxAttempts))
	task, hasTask := r.Header.Get(HeaderTask), len(r.Header.Values(HeaderTask)) > 0
	if len(specs) == 0 {
		switch {
		case attempts != "":
			return nil, fmt.Errorf("%s without %s: name a validator (this server has no default)", HeaderMaxAttempts, HeaderValidate)
		case hasTask:
			return nil, fmt.Errorf("%s without %s: name a validator (this server has no default)", HeaderTask, HeaderValidate)
		}
		return nil, nil
	}
	v := &validation{specs: specs, maxAttempts: h.defaultAttempts, task: task, hasTask: hasTask}
	if attempts != "" {
		n, err := strconv.Atoi(attempts)
		if err != nil || n < 1 || n > MaxAttemptsLimit {
			return nil, fmt.Errorf("%s: %q: want a whole number from 1 to %d", HeaderMaxAttempts, attempts, MaxAttemptsLimit)
		}
		v.maxAttempts = n
	}
	v.fromHeader = fromHeader
	return v, nil
}

// expandSpecs returns specs with each that the parser refuses but that
// is a comma-separated list of specs it takes split into those: some
// clients (fetch's Headers) join a repeated header's values with ", ".
func (h *Handler) expandSpecs(specs []string, opts []retry.SpecOption) []string {
	var out []string
	for _, s := range specs {
		if _, err := h.parser.Parse(s, opts...); err == nil || !strings.Contains(s, ",") {
			out = append(out, s)
			continue
		}
		parts := strings.Split(s, ",")
		for i := range parts {
			parts[i] = strings.TrimSpace(parts[i])
			if _, err := h.parser.Parse(parts[i], opts...); err != nil {
				parts = nil
				break
			}
		}
		if parts == nil {
			out = append(out, s) // refused whole, as given
		} else {
			out = append(out, parts...)
		}
	}
	return out
}

// checkCommands refuses a "cmd:" spec in a request's header unless the
// Handler lets requests name commands.
func (h *Handler) checkCommands(specs []string) error {
	if h.headerCommands {
		return nil
	}
	for _, s := range specs {
		if kind, _, _ := strings.Cut(s, ":"); strings.TrimSpace(kind) == "cmd" {
			return fmt.Errorf("%s: %q: a request may not name a cmd: validator, which runs a command on the server; the server's own defaults may", HeaderValidate, s)
		}
	}
	return nil
}

// turnOptions returns the options of v's turn with client c: the
// validators parsed (an "llm:" spec judged by c with model), the attempts
// and the task. A spec the parser refuses is an error naming the header.
func (h *Handler) turnOptions(v *validation, c llm.Client, req *request) ([]tract.ChatOption, error) {
	opts := append(append([]retry.SpecOption(nil), h.specOpts...), retry.WithJudge(tract.Judge(c, req.Model)))
	specs := v.specs
	if v.fromHeader {
		specs = h.expandSpecs(specs, opts)
		// Refused before the turn can run one.
		if err := h.checkCommands(specs); err != nil {
			return nil, err
		}
	}
	val, err := h.parser.ParseAll(specs, opts...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", HeaderValidate, err)
	}
	out := []tract.ChatOption{tract.UseClient(c), tract.Validate(val)}
	if req.Model != "" {
		out = append(out, tract.Model(req.Model))
	}
	if req.Temperature != nil {
		out = append(out, tract.Temperature(*req.Temperature))
	}
	if v.maxAttempts > 0 {
		out = append(out, tract.MaxAttempts(v.maxAttempts))
	}
	if v.hasTask {
		out = append(out, tract.Task(v.task))
	}
	// The options are checked now, before anything is written.
	if _, err := turn.NewConfig(c, out...); err != nil {
		var taskErr *tract.TaskIDError
		if errors.As(err, &taskErr) {
			return nil, fmt.Errorf("%s: %w", HeaderTask, err)
		}
		return nil, err
	}
	return out, nil
}

// clientKey returns the key a call to w's upstream goes with: the
// upstream's own, else (pass-through, no token) the client's.
func (h *Handler) clientKey(r *http.Request, w wire) string {
	if k := h.upstreamOf(w).key; k != "" {
		return k
	}
	if h.token != "" {
		return ""
	}
	if k := strings.TrimSpace(r.Header.Get("x-api-key")); k != "" {
		return k
	}
	k, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return strings.TrimSpace(k)
}

// modelClient returns the client of w's upstream a validated turn calls,
// with the key of the request (see clientKey).
func (h *Handler) modelClient(r *http.Request, w wire, req *request) (llm.Client, error) {
	up := h.upstreamOf(w)
	model := req.Model
	if model == "" {
		model = "default" // the client needs one; the server picks when it ignores it
	}
	// No retries of the client's own: as on a call passed through, a
	// failure goes back to the client, whose SDK retries the request.
	opts := []llm.Option{llm.WithBaseURL(up.base.String()), llm.WithModel(model), llm.WithHTTPClient(h.client), llm.WithMaxRetries(0)}
	if key := h.clientKey(r, w); key != "" {
		opts = append(opts, llm.WithAPIKey(key))
	}
	if req.MaxTokens > 0 {
		opts = append(opts, llm.WithMaxTokens(req.MaxTokens))
	}
	if h.timeout > 0 {
		opts = append(opts, llm.WithIdleTimeout(h.timeout))
	}
	if w == wireAnthropic {
		return llm.NewAnthropic(opts...)
	}
	return llm.NewOpenAI(opts...)
}

// validated answers a request with a validated turn: its messages are
// recorded, then the turn runs on their branch (steering, retries,
// purify), and the client gets the accepted answer alone, in its wire's
// shape. No lock or transaction is held across the turn's model calls:
// the index is read again from the branch once the turn is over.
func (h *Handler) validated(rw http.ResponseWriter, r *http.Request, w wire, named string, req *request, ps []prefix, v *validation) {
	if req.Tools {
		writeError(rw, w, http.StatusBadRequest, "proxy: a validated request cannot offer tools: the client runs them, and a validated turn answers with the accepted text alone; send it without "+HeaderValidate)
		return
	}
	if len(ps) == 0 {
		writeError(rw, w, http.StatusBadRequest, "proxy: the request has no message to answer")
		return
	}
	c, err := h.modelClient(r, w, req)
	if err != nil {
		writeError(rw, w, http.StatusBadRequest, "proxy: "+redact(err.Error(), h.clientKey(r, w)))
		return
	}
	opts, err := h.turnOptions(v, c, req)
	if err != nil {
		writeError(rw, w, http.StatusBadRequest, "proxy: "+err.Error())
		return
	}
	ctx := r.Context()
	rec, err := h.record(context.WithoutCancel(ctx), w, named, req, ps, nil)
	if err != nil {
		if h.onRecordError != nil {
			h.onRecordError(&RecordError{Route: r.URL.Path, Err: err})
		}
		writeError(rw, w, http.StatusInternalServerError, "proxy: recording the request: "+err.Error())
		return
	}
	res, err := h.t.OnBranch(rec.Branch).Generate(ctx, opts...)
	if serr := h.resync(context.WithoutCancel(ctx), rec.Branch); serr != nil && h.onRecordError != nil {
		h.onRecordError(&RecordError{Route: r.URL.Path, Err: serr})
	}
	rw.Header().Set(HeaderBranch, rec.Branch)
	if res != nil {
		rw.Header().Set(HeaderAttempts, strconv.Itoa(res.Attempts))
	}
	if err != nil {
		if ctx.Err() != nil {
			return // the client went away: the turn recorded what it did
		}
		h.turnFailed(rw, r, w, res, err)
		return
	}
	rw.Header().Set(HeaderCommit, res.Commit.String())
	if req.Stream {
		streamAccepted(rw, w, req, res, recorded{Branch: rec.Branch, Commit: res.Commit}, h.now())
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(http.StatusOK)
	b, _ := json.Marshal(acceptedDoc(w, req, res, h.now()))
	write(rw, append(b, '\n'))
}

// resync reads branch into the index again, after a turn moved it.
func (h *Handler) resync(ctx context.Context, branch string) error {
	x := h.idx
	x.mu.Lock()
	defer x.mu.Unlock()
	for x.waitsFor(nil, branch) {
		x.done.Wait()
	}
	tip, err := h.branchTip(ctx, branch)
	if err != nil {
		return err
	}
	return x.sync(ctx, h.t, branch, tip)
}

// branchTip returns the tip of branch (zero when it does not exist).
func (h *Handler) branchTip(ctx context.Context, branch string) (dag.Hash, error) {
	tip, err := h.t.OnBranch(branch).Resolve(ctx, "HEAD")
	if errors.Is(err, tract.ErrBranchNotFound) || errors.Is(err, tract.ErrUnbornBranch) {
		return dag.Hash{}, nil
	}
	return tip, err
}

// turnFailed answers a validated request whose turn accepted no answer,
// in the wire's error shape: exhaustion with StatusExhausted and the
// diagnoses, a model call that failed with the upstream's status.
func (h *Handler) turnFailed(rw http.ResponseWriter, r *http.Request, w wire, res *tract.ChatResult, err error) {
	key := h.clientKey(r, w)
	var ex *retry.ExhaustedError
	exhausted := errors.As(err, &ex)
	// The commit to inspect: the error commit of a failed call, else the
	// last attempt.
	inspect := dag.Hash{}
	if res != nil {
		if !exhausted {
			inspect = res.Commit
		}
		if n := len(res.History); inspect.IsZero() && n > 0 {
			inspect = res.History[n-1].Commit
		}
	}
	if !inspect.IsZero() {
		rw.Header().Set(HeaderCommit, inspect.String())
	}
	if exhausted {
		var b strings.Builder
		fmt.Fprintf(&b, "proxy: no answer passed validation in %d attempts", ex.Attempts)
		for i, d := range ex.History {
			fmt.Fprintf(&b, "; attempt %d: %s", i+1, d)
		}
		if !inspect.IsZero() {
			fmt.Fprintf(&b, " (the last attempt is commit %s)", inspect)
		}
		writeError(rw, w, StatusExhausted, redact(b.String(), key))
		return
	}
	var esc *tract.EscalationError
	if errors.As(err, &esc) && esc.Reason == tract.EscalateBlocked {
		msg := "proxy: a validator blocked the answer: " + redact(err.Error(), key)
		if !inspect.IsZero() {
			msg += fmt.Sprintf(" (commit %s)", inspect)
		}
		writeError(rw, w, StatusExhausted, msg)
		return
	}
	status := http.StatusBadGateway
	var apiErr *llm.APIError
	if errors.As(err, &apiErr) && apiErr.StatusCode >= 400 {
		status = apiErr.StatusCode
	}
	var tooLarge *tract.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		status = http.StatusBadGateway
	case errors.Is(err, tract.ErrEmptyContext):
		status = http.StatusBadRequest
	}
	msg := "proxy: the validated turn failed: " + redact(err.Error(), key)
	if !inspect.IsZero() {
		msg += fmt.Sprintf(" (commit %s)", inspect)
	}
	writeError(rw, w, status, msg)
}

// acceptedDoc is a validated turn's accepted answer as w's response
// document, the attempts' usage summed.
func acceptedDoc(w wire, req *request, res *tract.ChatResult, now time.Time) any {
	model := res.Model
	if model == "" {
		model = req.Model
	}
	u := res.Usage
	if w == wireAnthropic {
		return map[string]any{
			"id": "msg_tract_" + res.Commit.String()[:24], "type": "message", "role": "assistant", "model": model,
			"content":     []any{map[string]any{"type": "text", "text": res.Text}},
			"stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": u.PromptTokens - u.CacheCreationTokens - u.CacheReadTokens,
				"output_tokens": u.CompletionTokens, "cache_creation_input_tokens": u.CacheCreationTokens,
				"cache_read_input_tokens": u.CacheReadTokens},
		}
	}
	return map[string]any{
		"id": "chatcmpl-tract-" + res.Commit.String()[:24], "object": "chat.completion", "created": now.Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": res.Text, "refusal": nil},
			"logprobs": nil, "finish_reason": "stop"}},
		"usage": openAIUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens},
	}
}

// streamAccepted sends a validated turn's accepted answer as w's event
// stream: the whole text in one delta, between the events that open and
// close a stream of that wire, and the comment lines that name the
// branch and the commit, as at the end of a stream passed through.
func streamAccepted(rw http.ResponseWriter, w wire, req *request, res *tract.ChatResult, rec recorded, now time.Time) {
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-cache")
	rw.WriteHeader(http.StatusOK)
	model := res.Model
	if model == "" {
		model = req.Model
	}
	u := res.Usage
	var b strings.Builder
	event := func(name string, doc any) {
		data, _ := json.Marshal(doc)
		if name != "" {
			fmt.Fprintf(&b, "event: %s\n", name)
		}
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	if w == wireAnthropic {
		id := "msg_tract_" + res.Commit.String()[:24]
		in := u.PromptTokens - u.CacheCreationTokens - u.CacheReadTokens
		event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": in, "output_tokens": 0, "cache_creation_input_tokens": u.CacheCreationTokens,
				"cache_read_input_tokens": u.CacheReadTokens}}})
		event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
			"content_block": map[string]any{"type": "text", "text": ""}})
		event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "text_delta", "text": res.Text}})
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		event("message_delta", map[string]any{"type": "message_delta",
			"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": u.CompletionTokens}})
		event("message_stop", map[string]any{"type": "message_stop"})
	} else {
		id := "chatcmpl-tract-" + res.Commit.String()[:24]
		chunk := func(choices []any) map[string]any {
			return map[string]any{"id": id, "object": "chat.completion.chunk", "created": now.Unix(), "model": model, "choices": choices}
		}
		choice := func(delta map[string]any, finish any) []any {
			return []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}
		}
		event("", chunk(choice(map[string]any{"role": "assistant", "content": res.Text}, nil)))
		event("", chunk(choice(map[string]any{}, "stop")))
		if req.IncludeUsage {
			// As OpenAI sends it: a last chunk with no choices.
			last := chunk([]any{})
			last["usage"] = openAIUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
			event("", last)
		}
		b.WriteString("data: [DONE]\n\n")
	}
	b.Write(streamComment(rec))
	write(rw, []byte(b.String()))
}
