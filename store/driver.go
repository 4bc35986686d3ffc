package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// Driver opens the repositories that URLs of one scheme name: those of a
// database server, say. A backend's package registers its driver with
// Register in an init function, so a program gets a backend by importing
// its package, as with database/sql drivers, and links no backend it does
// not import:
//
//	import _ "github.com/tractdag/tract/store/postgres" // postgres:// and postgresql://
//
// A driver may also be a Migrator and a Dropper. Its methods are called
// from many goroutines at once.
type Driver interface {
	// Open opens the existing repository url names, failing with an
	// error matching ErrNotRepository when there is none; with
	// opts.Create it makes the repository instead, failing with one
	// matching ErrExists when there is one. ctx bounds the opening.
	Open(ctx context.Context, url string, opts OpenOptions) (Store, error)
}

// OpenOptions are what OpenURL asks of a Driver.
type OpenOptions struct {
	// Create makes a new repository instead of opening one.
	Create bool
	// Context, when not nil, bounds every later call of the store to its
	// server, not only the opening: once it is cancelled, a method
	// waiting on the server returns at once with an error matching its
	// error, and the transaction rolls back.
	Context context.Context
}

// Migrator is a Driver whose databases hold a schema that must be
// created, or upgraded to the driver's version, before its repositories
// can be opened.
type Migrator interface {
	// Migrate creates or upgrades the schema of the database url names,
	// idempotently: running it again, or from several processes at once,
	// is harmless.
	Migrate(ctx context.Context, url string) (*MigrateResult, error)
}

// MigrateResult says what a Migrator did: the schema version found (0:
// none) and the version now.
type MigrateResult struct {
	// From is the schema version found (0: none).
	From int `json:"from"`
	// To is the schema version now.
	To int `json:"to"`
}

// Dropper is a Driver that can delete a repository.
type Dropper interface {
	// Drop deletes the repository url names, and everything in it, at
	// once. Dropping a repository that does not exist is not an error.
	Drop(ctx context.Context, url string) error
}

// ErrNoDriver is matched by the error (a *NoDriverError) of a URL whose
// scheme has no Driver registered in the program.
var ErrNoDriver = errors.New("no store driver registered")

// NoDriverError is the error of a URL whose scheme no package imported by
// the program has registered a Driver for. It matches ErrNoDriver.
type NoDriverError struct {
	// Scheme is the URL's scheme, in lower case.
	Scheme string
	// Package is the import path of the package of this module that
	// registers the scheme, "" for a scheme none does.
	Package string
	// Registered lists the schemes that are registered, sorted.
	Registered []string
}

// Error names the package to import, or the schemes that have a driver.
func (e *NoDriverError) Error() string {
	switch {
	case e.Package != "":
		return fmt.Sprintf("%v for %s:// URLs: the program must import _ %q, which registers it", ErrNoDriver, e.Scheme, e.Package)
	case len(e.Registered) == 0:
		return fmt.Sprintf("%v for %s:// URLs (the program has no driver)", ErrNoDriver, e.Scheme)
	}
	return fmt.Sprintf("%v for %s:// URLs (the program has drivers for %s://)", ErrNoDriver, e.Scheme, strings.Join(e.Registered, "://, "))
}

// Is matches ErrNoDriver.
func (e *NoDriverError) Is(target error) bool { return target == ErrNoDriver }

// driverPackage returns the import path of the package of this module
// that registers scheme, or "" when none does: what a NoDriverError tells
// a program to import.
func driverPackage(scheme string) string {
	switch scheme {
	case "postgres", "postgresql":
		return "github.com/tractdag/tract/store/postgres"
	}
	return ""
}

// drivers is the registry Register writes and OpenURL reads. It is the
// one package-level variable of package store that changes: as with
// database/sql's drivers, the backends a program links are a fact of the
// whole program, which its imports decide. It is written only by Register
// from the init functions of backend packages, and guarded by its mutex.
var drivers registry

// registry maps URL schemes to their drivers.
type registry struct {
	mu       sync.RWMutex      // guards byScheme
	byScheme map[string]Driver // by lower-case scheme
}

// Register makes d the driver of URLs whose scheme is scheme (compared
// without regard to case). It is meant for the init function of a
// backend's package. It panics when d is nil, when scheme is not a URL
// scheme of at least two characters (letters, digits, '+', '-', '.',
// starting with a letter), or when scheme has a driver already: those
// are mistakes of the program, not of its input.
func Register(scheme string, d Driver) { drivers.register(scheme, d) }

// Drivers returns the schemes that have a driver registered, in lower
// case and sorted.
func Drivers() []string { return drivers.schemes() }

func (r *registry) register(scheme string, d Driver) {
	if d == nil {
		panic("store: Register of a nil driver for " + scheme)
	}
	if !validScheme(scheme) {
		panic(fmt.Sprintf("store: Register of the invalid scheme %q", scheme))
	}
	scheme = strings.ToLower(scheme)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byScheme[scheme]; dup {
		panic("store: Register called twice for the scheme " + scheme)
	}
	if r.byScheme == nil {
		r.byScheme = make(map[string]Driver)
	}
	r.byScheme[scheme] = d
}

func (r *registry) schemes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.byScheme))
	for s := range r.byScheme {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// driver returns the driver of loc's scheme, or a *NoDriverError.
func (r *registry) driver(loc string) (Driver, error) {
	scheme, ok := schemeOf(loc)
	if !ok {
		return nil, fmt.Errorf("%s is not a URL (scheme://…)", Redact(loc))
	}
	scheme = strings.ToLower(scheme)
	r.mu.RLock()
	d := r.byScheme[scheme]
	r.mu.RUnlock()
	if d == nil {
		return nil, &NoDriverError{Scheme: scheme, Package: driverPackage(scheme), Registered: r.schemes()}
	}
	return d, nil
}

// OpenURL opens the repository url names with the driver of its scheme
// (see Driver.Open), or makes it when opts.Create is set. It fails with a
// *NoDriverError when no driver of that scheme is registered.
func OpenURL(ctx context.Context, url string, opts OpenOptions) (Store, error) {
	return drivers.open(ctx, url, opts)
}

func (r *registry) open(ctx context.Context, url string, opts OpenOptions) (Store, error) {
	d, err := r.driver(url)
	if err != nil {
		return nil, err
	}
	return d.Open(ctx, url, opts)
}

// MigrateURL creates or upgrades the schema of the database url names
// (see Migrator). It fails with a *NoDriverError when no driver of its
// scheme is registered, and with an error matching errors.ErrUnsupported
// when the driver has no schema to migrate.
func MigrateURL(ctx context.Context, url string) (*MigrateResult, error) {
	return drivers.migrate(ctx, url)
}

func (r *registry) migrate(ctx context.Context, url string) (*MigrateResult, error) {
	d, err := r.driver(url)
	if err != nil {
		return nil, err
	}
	m, ok := d.(Migrator)
	if !ok {
		return nil, fmt.Errorf("migrate %s: %w: its driver has no schema to migrate", Redact(url), errors.ErrUnsupported)
	}
	return m.Migrate(ctx, url)
}

// DropURL deletes the repository url names (see Dropper). It fails with
// a *NoDriverError when no driver of its scheme is registered, and with
// an error matching errors.ErrUnsupported when the driver cannot drop a
// repository.
func DropURL(ctx context.Context, url string) error {
	return drivers.drop(ctx, url)
}

func (r *registry) drop(ctx context.Context, url string) error {
	d, err := r.driver(url)
	if err != nil {
		return err
	}
	dr, ok := d.(Dropper)
	if !ok {
		return fmt.Errorf("drop %s: %w: its driver cannot drop a repository", Redact(url), errors.ErrUnsupported)
	}
	return dr.Drop(ctx, url)
}

// IsURL reports whether loc is a URL, scheme://…, rather than a file
// path: whether a driver opens it (OpenURL). A scheme has at least two
// characters, so that a Windows path such as C://x stays a path. Whether
// a driver of the scheme is registered plays no part.
func IsURL(loc string) bool {
	_, ok := schemeOf(loc)
	return ok
}

// schemeOf returns the scheme of loc when loc is a URL (see IsURL).
func schemeOf(loc string) (scheme string, ok bool) {
	scheme, _, ok = strings.Cut(loc, "://")
	return scheme, ok && validScheme(scheme)
}

// validScheme reports whether s is a URL scheme (RFC 3986: a letter, then
// letters, digits, '+', '-' and '.') of at least two characters.
func validScheme(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || !('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// Redact returns loc as it may be shown to a user or written to a log:
// a URL with its password, and the value of any password parameter of its
// query, replaced by "xxxxx"; a URL that does not parse as
// "scheme://(malformed URL)"; a file path as it is. It needs no driver,
// so a URL is never shown with its password, whatever the program links.
func Redact(loc string) string {
	scheme, ok := schemeOf(loc)
	if !ok {
		return loc
	}
	u, err := url.Parse(loc)
	if err != nil {
		if shown, ok := redactHostList(loc); ok {
			return shown
		}
		return scheme + "://(malformed URL)"
	}
	if q := u.Query(); u.RawQuery != "" && redactQuery(q) {
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

// redactQuery replaces the value of every password parameter of q by
// "xxxxx", and reports whether there was one.
func redactQuery(q url.Values) bool {
	hidden := false
	for k, vs := range q {
		if strings.EqualFold(k, "password") {
			for i := range vs {
				vs[i] = "xxxxx"
			}
			hidden = true
		}
	}
	return hidden
}

// redactHostList redacts a URL with a list of hosts, such as
// postgres://ada:pw@db1:5432,db2:5433,db3/tract, that url.Parse refuses
// (it reads the last port as the port of one host) and PostgreSQL's
// drivers take: everything between "://" and the last '@' of the
// authority after the user's name is hidden, and password parameters. ok
// is false when loc has no host list or its query does not parse.
func redactHostList(loc string) (shown string, ok bool) {
	scheme, rest, _ := strings.Cut(loc, "://")
	base, query, hasQuery := strings.Cut(rest, "?")
	authority, path, hasPath := strings.Cut(base, "/")
	if !strings.Contains(authority, ",") {
		return "", false
	}
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		user, _, hasPassword := strings.Cut(authority[:at], ":")
		if hasPassword {
			user += ":xxxxx"
		}
		authority = user + authority[at:]
	}
	shown = scheme + "://" + authority
	if hasPath {
		shown += "/" + path
	}
	if hasQuery {
		q, err := url.ParseQuery(query)
		if err != nil {
			return "", false
		}
		if redactQuery(q) {
			query = q.Encode()
		}
		shown += "?" + query
	}
	return shown, true
}
