package postgres

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/tractdag/tract/store"
)

// DefaultRepository is the repository a URL without a repository
// parameter names.
const DefaultRepository = "default"

// validRepositoryName reports whether name may name a repository:
// letters, digits and . _ - /, starting with a letter or digit, up to 128
// characters. (A regular expression of it cost every command 0.2 ms to
// compile at start.)
func validRepositoryName(name string) bool {
	if name == "" || len(name) > 128 || !isAlnum(name[0]) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !isAlnum(c) && c != '.' && c != '_' && c != '/' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// IsURL reports whether s names a PostgreSQL database (a postgres:// or
// postgresql:// URL, the scheme in any case, as store.OpenURL compares
// schemes) rather than a repository file.
func IsURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	return ok && (strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql"))
}

// Redact returns a database URL as it may be shown: with its password
// replaced by "xxxxx" (see store.Redact). Anything that is not a URL is
// returned as it is.
func Redact(s string) string { return store.Redact(s) }

// ServerURL returns the database URL dbURL without tract's own parameters
// (repository, reply_timeout): the URL pgx or psql takes, whose server
// would refuse them as settings.
func ServerURL(dbURL string) (string, error) {
	if _, err := parseLocation(dbURL); err != nil {
		return "", err
	}
	base, query := splitURL(dbURL)
	return joinURL(base, withoutOwnParams(query)), nil
}

// splitURL cuts a postgres:// URL at its query: base is the scheme, the
// user, the hosts and the database; query what follows the first '?'.
// url.Parse is not used: it refuses lists of hosts that pgx (and libpq)
// take, such as db1:5432,db2:5433,db3 or [::1]:5432,[::1]:5433, whose
// last port it reads as the port of one host. The scheme is put in lower
// case, as url.Parse does and pgx needs.
func splitURL(raw string) (base, query string) {
	base, query, _ = strings.Cut(raw, "?")
	if scheme, rest, ok := strings.Cut(base, "://"); ok {
		base = strings.ToLower(scheme) + "://" + rest
	}
	return base, query
}

// joinURL puts a URL's base and query back together.
func joinURL(base, query string) string {
	if query == "" {
		return base
	}
	return base + "?" + query
}

// urlPassword returns the password in the user information of a URL's
// base, as written and %-decoded. The user information ends at the first
// '@' before any '/', as pgx reads it.
func urlPassword(base string) []string {
	_, rest, _ := strings.Cut(base, "://")
	i := strings.IndexAny(rest, "@/")
	if i < 0 || rest[i] != '@' {
		return nil
	}
	_, pw, ok := strings.Cut(rest[:i], ":")
	if !ok || pw == "" {
		return nil
	}
	pws := []string{pw}
	if d, err := url.PathUnescape(pw); err == nil && d != pw {
		pws = append(pws, d)
	}
	return pws
}

// parseQuery returns the parameters of a URL's query. A query that does
// not parse whole (a bad %-escape, a ';' between parameters) is an error:
// url.URL.Query would drop the pair silently, and a repository parameter
// dropped so would open the default repository instead of the one named.
func parseQuery(query string) (url.Values, error) {
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("database URL: malformed query (after '?'): %v", err)
	}
	return q, nil
}

// withoutOwnParams returns a URL's query without tract's own parameters,
// every other pair as written: url.Values.Encode would write a space
// (options=-c%20search_path%3Dx) as '+', which pgx, as libpq, reads as a
// plus sign.
func withoutOwnParams(query string) string {
	var kept []string
	for _, pair := range strings.Split(query, "&") {
		k, _, _ := strings.Cut(pair, "=")
		if name, err := url.QueryUnescape(k); pair == "" || err == nil && (name == "repository" || name == "reply_timeout") {
			continue
		}
		kept = append(kept, pair)
	}
	return strings.Join(kept, "&")
}

// location is a parsed database URL.
type location struct {
	// pool is the pgxpool configuration, without the repository parameter.
	pool *pgxpool.Config
	// repository is the repository's name in the database.
	repository string
	// display is the URL without its password.
	display string
	// secrets are the password strings no error may show: the URL's, and
	// the one pgx found in PGPASSWORD or .pgpass.
	secrets []string
	// replyTimeout is the URL's reply_timeout, when replySet.
	replyTimeout time.Duration
	replySet     bool
	// connectSet says the URL or PGCONNECT_TIMEOUT set connect_timeout.
	connectSet bool
}

// parseLocation parses a postgres:// URL. The repository parameter names
// the repository (DefaultRepository when absent) and reply_timeout the
// reply timeout (see WithReplyTimeout); every other parameter is pgx's.
// Unless the URL sets default_query_exec_mode, queries run in
// pgx.QueryExecModeExec: no statement is prepared across transactions, so
// the store works behind a pooler in transaction mode.
func parseLocation(raw string) (*location, error) {
	if !IsURL(raw) {
		return nil, fmt.Errorf("%q is not a postgres:// or postgresql:// URL", Redact(raw))
	}
	base, query := splitURL(raw)
	loc := &location{secrets: urlPassword(base)}
	q, err := parseQuery(query)
	if err != nil {
		return nil, err
	}
	loc.repository = DefaultRepository
	switch names := q["repository"]; len(names) {
	case 0:
	case 1:
		loc.repository = names[0]
	default:
		return nil, fmt.Errorf("database URL: repository parameter given %d times", len(names))
	}
	if !validRepositoryName(loc.repository) {
		return nil, fmt.Errorf("repository name %q: use 1 to 128 letters, digits, '.', '_', '-' or '/', starting with a letter or digit", loc.repository)
	}
	explicitMode := q.Has("default_query_exec_mode")
	loc.connectSet = q.Has("connect_timeout")
	if q.Has("reply_timeout") {
		if loc.replyTimeout, err = parseReplyTimeout(q.Get("reply_timeout")); err != nil {
			return nil, fmt.Errorf("database URL: %w", err)
		}
		loc.replySet = true
	}
	serverQuery := withoutOwnParams(query)
	shown := "repository=" + url.QueryEscape(loc.repository)
	if serverQuery != "" {
		shown = serverQuery + "&" + shown
	}
	loc.display = store.Redact(joinURL(base, shown)) // a password parameter too

	cfg, err := pgxpool.ParseConfig(joinURL(base, serverQuery))
	if err != nil {
		return nil, redact(fmt.Errorf("database URL %s: %w", loc.display, err), loc.secrets)
	}
	if cfg.ConnConfig.Password != "" {
		loc.secrets = append(loc.secrets, cfg.ConnConfig.Password)
	}
	if !explicitMode {
		cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	}
	loc.connectSet = loc.connectSet || cfg.ConnConfig.ConnectTimeout != 0
	if !q.Has("sslmode") && !q.Has("ssl") && !q.Has("service") && os.Getenv("PGSSLMODE") == "" && os.Getenv("PGSERVICE") == "" {
		plainFirstOnLoopback(&cfg.ConnConfig.Config)
	}
	loc.pool = cfg
	return loc, nil
}

// plainFirstOnLoopback makes the connections of cc, whose sslmode is
// the default prefer, to a server on the loopback interface try without
// TLS first, then with it. pgx tries prefer's TLS first and, when the
// server has none (as most local servers), makes a second connection
// without it: a second TCP handshake and a second server process, which
// cost a command 3 to 5 ms, more than the rest of a `status`. On
// loopback TLS protects nothing that prefer promised (it verifies no
// certificate, and whoever can read the loopback interface is root on
// the machine); a server that only takes TLS there (a hostssl line in
// pg_hba.conf) refuses the first attempt and gets the second. Servers
// elsewhere keep prefer's order.
func plainFirstOnLoopback(cc *pgconn.Config) {
	all := append([]*pgconn.FallbackConfig{{Host: cc.Host, Port: cc.Port, TLSConfig: cc.TLSConfig}}, cc.Fallbacks...)
	for i := 0; i+1 < len(all); i++ {
		a, b := all[i], all[i+1]
		if a.TLSConfig != nil && b.TLSConfig == nil && a.Host == b.Host && a.Port == b.Port && isLoopback(a.Host) {
			all[i], all[i+1] = b, a
			i++
		}
	}
	cc.Host, cc.Port, cc.TLSConfig = all[0].Host, all[0].Port, all[0].TLSConfig
	cc.Fallbacks = all[1:]
}

// isLoopback reports whether host names the loopback interface.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redactedError is an error whose text has had passwords removed. It
// unwraps to the original, so errors.Is and errors.As still see it.
type redactedError struct {
	err  error
	text string
}

func (e *redactedError) Error() string { return e.text }
func (e *redactedError) Unwrap() error { return e.err }

// redact returns err with every secret in its text replaced by "xxxxx".
// Secrets shorter than 3 characters are left alone: replacing them would
// garble every word they occur in, and protect little.
func redact(err error, secrets []string) error {
	if err == nil {
		return nil
	}
	text := err.Error()
	changed := false
	for _, s := range secrets {
		if len(s) >= 3 && strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, "xxxxx")
			changed = true
		}
	}
	if !changed {
		return err
	}
	return &redactedError{err: err, text: text}
}

// IsConnectError reports whether err is a failure to reach or log in to
// the database server (a wrong host, port, user or password, a server
// that is down), as opposed to an error of the database's content.
func IsConnectError(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce)
}
