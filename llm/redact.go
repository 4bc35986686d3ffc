package llm

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

const (
	redactedKey = "[REDACTED]"
	// minURLSecret is the shortest credential of the base URL redacted
	// wherever it occurs: a shorter value ("?key=1") would blot out
	// ordinary text. Where a URL shows it (after "key=", before "@"), a
	// credential is redacted whatever its length (see redactURLs); the
	// API key is redacted everywhere whatever its length.
	minURLSecret = 8
	// minEncoded is the shortest base64 run redacted on its own; shorter
	// runs occur by chance in ordinary text.
	minEncoded = 8
)

// redactor hides the client's secrets in the text it puts into errors:
// the API key, and the credentials of the base URL (its userinfo, and the
// values of query parameters named like a key, token or signature), which
// reach error text through the URL of a network error or a server that
// echoes what it was sent. Every URL credential written in the text is
// redacted whatever its length and whoever's it is (see redactURLs); a
// secret of the client's own is also found wherever it occurs, in every
// form it may take there:
//
//   - as is;
//   - percent-encoded, whichever characters were escaped and in either case
//     of hex digit: url.QueryEscape and url.PathEscape forms, the userinfo
//     of a URL, a space as "+";
//   - quoted as Go (%q) and JSON quote strings;
//   - in base64, standard or URL-safe, at any offset in the encoded text
//     (the Basic authorization header net/http builds from a URL's
//     userinfo, "user:secret"): the run of characters that only the secret
//     determines is redacted, so the few characters at either end that
//     mix in bits of the neighbouring bytes remain.
//
// The zero redactor redacts only the credentials written in URLs.
type redactor struct {
	secrets []string // matched as is or percent-encoded, longest first
	forms   []string // other encodings, matched exactly, longest first
}

// newRedactor returns the redactor of apiKey and the credentials in base
// (which may be nil).
func newRedactor(apiKey string, base *url.URL) *redactor {
	r := &redactor{}
	if apiKey != "" {
		r.secrets = append(r.secrets, apiKey)
	}
	for _, s := range urlSecrets(base) {
		if len(s) >= minURLSecret && !slices.Contains(r.secrets, s) {
			r.secrets = append(r.secrets, s)
		}
	}
	for _, s := range r.secrets {
		r.forms = append(r.forms, encodings(s)...)
	}
	longestFirst := func(a, b string) int { return cmp.Or(cmp.Compare(len(b), len(a)), strings.Compare(a, b)) }
	slices.SortFunc(r.secrets, longestFirst)
	slices.SortFunc(r.forms, longestFirst)
	r.forms = slices.Compact(r.forms)
	return r
}

// urlSecrets returns the credentials written into u: the password of its
// userinfo (or the user name when there is no password: net/http sends
// either as Basic authorization), and the values of its query parameters
// whose names say they are secret.
func urlSecrets(u *url.URL) []string {
	if u == nil {
		return nil
	}
	var out []string
	if u.User != nil {
		if p, ok := u.User.Password(); ok {
			out = append(out, p)
		} else {
			out = append(out, u.User.Username())
		}
	}
	q, _ := url.ParseQuery(u.RawQuery) // the pairs that parse; the rest is no secret we can name
	for name, values := range q {
		if isSecretParam(name) {
			out = append(out, values...)
		}
	}
	return out
}

// isSecretParam reports whether a query parameter's name says that it is a
// credential ("api-key", "key", "access_token", "sig", an OAuth "code",
// …), in any case. Its name need only contain one of the words: a
// harmless parameter so named ("monkey=1") loses its value in error text,
// which is better than a credential kept.
func isSecretParam(name string) bool {
	name = strings.ToLower(name)
	for _, w := range [...]string{"key", "token", "secret", "password", "passwd", "sig", "auth", "credential", "code"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// encodings returns the forms of s that redact matches exactly: its Go
// and JSON quotations, when they differ from s, and its base64 runs.
func encodings(s string) []string {
	var out []string
	if q := strconv.Quote(s); q[1:len(q)-1] != s {
		out = append(out, q[1:len(q)-1])
	}
	if j, err := json.Marshal(s); err == nil && string(j[1:len(j)-1]) != s {
		out = append(out, string(j[1:len(j)-1]))
	}
	// Bytes before s in the encoded text shift it by 0, 1 or 2 bytes
	// within base64's 3-byte groups; from the first group that s alone
	// fills, every whole group encodes to the same 4 characters whatever
	// came before. When s ends the encoded text, its last partial group
	// (and the padding) is s's alone too.
	for skip := range 3 {
		whole := (len(s) - skip) / 3 * 3
		if whole <= 0 || whole/3*4 < minEncoded {
			continue
		}
		for _, b := range [][]byte{[]byte(s[skip:]), []byte(s[skip : skip+whole])} {
			std := base64.StdEncoding.EncodeToString(b)
			out = append(out, std)
			if u := base64.URLEncoding.EncodeToString(b); u != std {
				out = append(out, u)
			}
		}
	}
	return out
}

// RedactKey returns s with apiKey replaced by "[REDACTED]" in every form
// the client's own errors would find it (see the redactor): for text a
// program writes about a key the client never got to use, such as a
// failure before the request.
func RedactKey(s, apiKey string) string { return newRedactor(apiKey, nil).redact(s) }

// redact replaces every occurrence of a secret in s, in any of its forms,
// and every credential written in a URL (see redactURLs), with
// "[REDACTED]".
func (r *redactor) redact(s string) string {
	s = redactURLs(s)
	if r == nil || len(r.secrets) == 0 {
		return s
	}
	s = r.redactEscaped(s)
	for _, f := range r.forms {
		s = strings.ReplaceAll(s, f, redactedKey)
	}
	return s
}

// redactEscaped replaces the secrets written as is or percent-encoded.
func (r *redactor) redactEscaped(s string) string {
	var b strings.Builder
	done := 0 // s[:done] is in b
	for i := 0; i < len(s); {
		end := -1
		for _, secret := range r.secrets {
			if end = matchEscaped(s, i, secret); end >= 0 {
				break
			}
		}
		if end < 0 {
			i++
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[done:i])
		b.WriteString(redactedKey)
		i, done = end, end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// matchEscaped reports where secret ends when it occurs at s[i:], each of
// its bytes written as is or percent-encoded (a space also as "+"); -1
// when it does not occur there.
func matchEscaped(s string, i int, secret string) int {
	j := i
	for k := 0; k < len(secret); k++ {
		if j >= len(s) {
			return -1
		}
		c := secret[k]
		switch {
		case s[j] == c:
			j++
		case s[j] == '%' && j+2 < len(s) && hexByte(s[j+1], s[j+2]) == int(c):
			j += 3
		case c == ' ' && s[j] == '+':
			j++
		default:
			return -1
		}
	}
	return j
}

// hexByte returns the byte two hex digits write, or -1.
func hexByte(hi, lo byte) int {
	h, l := unhex(hi), unhex(lo)
	if h < 0 || l < 0 {
		return -1
	}
	return h<<4 | l
}

// unhex returns the value of a hex digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// RedactURLs returns s with the credentials written in the URLs it holds
// replaced by "[REDACTED]", whatever their length: the value of every
// query parameter whose name says it is one (key, api_key, apikey,
// token, access_token, code, sig, signature, password, secret, … in any
// case; see isSecretParam), and the userinfo of every URL
// ("https://user:password@host" becomes "https://[REDACTED]@host"). It
// finds a parameter after "?", "&" or ";", as is, percent-encoded
// ("%3Fkey%3D…", a URL inside another's query) or JSON-escaped
// ("\u0026key="); the value runs to the next "&", "#", ";", quote,
// white space or backslash. The clients of this package redact their
// errors with it; a program uses it for the text it writes about a URL
// itself.
func RedactURLs(s string) string { return redactURLs(s) }

// urlPatterns are the regular expressions of redactURLs.
type urlPatterns struct {
	// queryParam matches what starts a query parameter's value: its
	// separator, name and "=", as is, percent-encoded or JSON-escaped.
	queryParam *regexp.Regexp
	// userinfo matches a URL's scheme and userinfo, up to the "@".
	userinfo *regexp.Regexp
}

// redactPatterns returns the patterns, compiled the first time a text
// may hold a URL rather than as every program importing llm starts.
var redactPatterns = sync.OnceValue(func() urlPatterns {
	return urlPatterns{
		queryParam: regexp.MustCompile(`(?i)(?:[?&;]|%3f|%26|%3b|\\u0026|\\u003f)([a-z0-9_.~\-]+)(?:=|%3d|\\u003d)`),
		userinfo:   regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.\-]*://([^/?#@\s"'<>\\]+)@`),
	}
})

// redactURLs is RedactURLs.
func redactURLs(s string) string {
	if !strings.ContainsAny(s, "=@") && !strings.Contains(s, "%3") && !strings.Contains(s, "u003") {
		return s // no parameter, no userinfo: most texts
	}
	pat := redactPatterns()
	var b strings.Builder
	done := 0 // s[:done] is in b
	for _, m := range pat.queryParam.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < done || !isSecretParam(s[m[2]:m[3]]) {
			continue
		}
		end := valueEnd(s, m[1])
		if end == m[1] || s[m[1]:end] == redactedKey {
			continue
		}
		b.WriteString(s[done:m[1]])
		b.WriteString(redactedKey)
		done = end
	}
	if done > 0 {
		b.WriteString(s[done:])
		s = b.String()
	}
	return pat.userinfo.ReplaceAllStringFunc(s, func(m string) string {
		at := strings.Index(m, "://") + len("://")
		if m[at:len(m)-1] == redactedKey {
			return m
		}
		return m[:at] + redactedKey + "@"
	})
}

// valueEnd returns where the query value that starts at s[i:] ends: at
// the next "&", "#", ";", quote, white space, backslash or angle bracket,
// or one of the first four percent-encoded.
func valueEnd(s string, i int) int {
	for j := i; j < len(s); j++ {
		switch c := s[j]; c {
		case '&', '#', ';', '"', '\'', '`', '\\', '<', '>', ' ', '\t', '\n', '\r':
			return j
		case '%':
			if j+2 < len(s) {
				switch strings.ToLower(s[j+1 : j+3]) {
				case "26", "23", "3b", "22", "20":
					return j
				}
			}
		}
	}
	return len(s)
}
