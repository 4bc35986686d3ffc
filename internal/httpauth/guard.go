package httpauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
)

// CookieName is the cookie the login form sets and the Guard accepts.
const CookieName = "tract_token"

// Codes of the refusals, in Error.Code.
const (
	// CodeUnauthorized: the request carries no token or a wrong one (401).
	CodeUnauthorized = "unauthorized"
	// CodeForbiddenHost: without a token, the Host header is not a
	// loopback name (403).
	CodeForbiddenHost = "forbidden_host"
	// CodeCrossOrigin: a state-changing request from another origin (403).
	CodeCrossOrigin = "cross_origin"
	// CodeUnsupportedMediaType: a state-changing request of a
	// RequireJSON route whose body is not application/json (415).
	CodeUnsupportedMediaType = "unsupported_media_type"
)

// Error is a request the Guard refuses.
type Error struct {
	// Status is the HTTP status to answer with.
	Status int
	// Code is one of the Code… constants.
	Code string
	// Message says what was wrong and what to send instead.
	Message string
}

func (e *Error) Error() string { return e.Message }

// Guard checks the requests of one listener. Its zero value is not
// usable: make one with New. A Guard is safe for concurrent use.
type Guard struct {
	token  string
	cookie string // the cookie's value: derived from token
	hosts  map[string]bool
	// loginHint says on the login form where the token comes from.
	loginHint string
}

// Option configures a Guard.
type Option func(*Guard)

// WithHosts adds host names (without port) that a request may name in
// its Host header when the Guard has no token, beside the loopback ones.
func WithHosts(names ...string) Option {
	return func(g *Guard) {
		for _, n := range names {
			g.hosts[strings.ToLower(strings.TrimSuffix(n, "."))] = true
		}
	}
}

// WithLoginHint sets the words the login form says beside its field,
// where the token comes from ("the --token the server was started
// with").
func WithLoginHint(hint string) Option { return func(g *Guard) { g.loginHint = hint } }

// New returns the Guard of a listener: token "" for a loopback listener
// open to every local client (the Host check), else the token every
// request must carry.
func New(token string, opts ...Option) *Guard {
	g := &Guard{token: token, hosts: map[string]bool{}}
	if token != "" {
		g.cookie = cookieValue(token)
	}
	for _, o := range opts {
		o(g)
	}
	return g
}

// HasToken reports whether the Guard requires a token.
func (g *Guard) HasToken() bool { return g.token != "" }

// cookieValue derives the login cookie's value from the token, so that
// the cookie store of a browser does not hold the token itself.
func cookieValue(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("tract login cookie v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CheckOption adjusts one Check or Wrap.
type CheckOption func(*checks)

type checks struct {
	requireJSON bool
	noCookie    bool
	errorWriter func(http.ResponseWriter, *http.Request, *Error)
	loginPage   bool
}

// RequireJSON makes the state-changing requests of the route take only
// "Content-Type: application/json" bodies (CSRF: no HTML form can send
// one, and a cross-origin fetch that does needs a preflight).
func RequireJSON() CheckOption { return func(c *checks) { c.requireJSON = true } }

// HeadersOnly makes the route take the token in its headers only, not
// as the login cookie: for routes no browser page calls (the proxy), so
// that a browser's cookie reaches nothing but the web view and the API.
func HeadersOnly() CheckOption { return func(c *checks) { c.noCookie = true } }

// WithErrorWriter makes Wrap write its refusals with fn instead of as
// JSON {"error":{"message","code"}}.
func WithErrorWriter(fn func(w http.ResponseWriter, r *http.Request, e *Error)) CheckOption {
	return func(c *checks) { c.errorWriter = fn }
}

// RedirectToLogin makes Wrap answer a GET or HEAD without the token
// with a redirect to the login form (/login?next=PATH) instead of a 401:
// for the pages of the web view.
func RedirectToLogin() CheckOption { return func(c *checks) { c.loginPage = true } }

// Authorized reports whether r carries token: as "Authorization: Bearer
// TOKEN" or "x-api-key: TOKEN". It compares in constant time. The cookie
// is a Guard's (Guard.Check accepts it too).
func Authorized(r *http.Request, token string) bool {
	if token == "" {
		return false
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		got = r.Header.Get("x-api-key")
		ok = got != ""
	}
	return ok && equal(strings.TrimSpace(got), token)
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// authorized reports whether r carries the Guard's token or its cookie.
func (g *Guard) authorized(r *http.Request) bool {
	if Authorized(r, g.token) {
		return true
	}
	c, err := r.Cookie(CookieName)
	return err == nil && equal(c.Value, g.cookie)
}

// Check returns the refusal of r, or nil when r may pass: the token
// (with one) or the Host (without), then, for a state-changing method,
// the origin and, with RequireJSON, the content type.
func (g *Guard) Check(r *http.Request, opts ...CheckOption) *Error {
	var c checks
	for _, o := range opts {
		o(&c)
	}
	return g.check(r, &c)
}

func (g *Guard) check(r *http.Request, c *checks) *Error {
	if g.token != "" {
		switch {
		case c.noCookie && !Authorized(r, g.token):
			return &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized,
				Message: "this server requires its token: send Authorization: Bearer TOKEN (or x-api-key: TOKEN)"}
		case !c.noCookie && !g.authorized(r):
			return &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized,
				Message: "this server requires its token: send Authorization: Bearer TOKEN (or x-api-key: TOKEN), or log in at " + LoginPath}
		}
	} else if !g.hostAllowed(r.Host) {
		return &Error{Status: http.StatusForbidden, Code: CodeForbiddenHost,
			Message: "Host " + quote(r.Host) + " is not a loopback name: this server answers only requests to localhost, 127.0.0.1 or [::1] (or it needs a token)"}
	}
	if safeMethod(r.Method) {
		return nil
	}
	if e := crossOrigin(r); e != nil {
		return e
	}
	if c.requireJSON && !isJSON(r.Header.Get("Content-Type")) {
		return &Error{Status: http.StatusUnsupportedMediaType, Code: CodeUnsupportedMediaType,
			Message: r.Method + " " + r.URL.Path + " takes a JSON body: send Content-Type: application/json"}
	}
	return nil
}

// Wrap returns next behind the Guard: a refused request is answered
// with its Error (see WithErrorWriter, RedirectToLogin) and never reaches
// next.
func (g *Guard) Wrap(next http.Handler, opts ...CheckOption) http.Handler {
	var c checks
	for _, o := range opts {
		o(&c)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e := g.check(r, &c)
		if e == nil {
			next.ServeHTTP(w, r)
			return
		}
		if e.Code == CodeUnauthorized && c.loginPage && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			http.Redirect(w, r, LoginPath+"?next="+urlQueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
			return
		}
		if e.Code == CodeUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="tract"`)
		}
		if c.errorWriter != nil {
			c.errorWriter(w, r, e)
			return
		}
		WriteError(w, e)
	})
}

// WriteError answers with e as JSON: {"error":{"message":...,"code":...}}.
func WriteError(w http.ResponseWriter, e *Error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(e.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": e.Message, "code": e.Code}})
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

func isJSON(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	return mt == "application/json" || strings.HasSuffix(mt, "+json") && strings.HasPrefix(mt, "application/")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
