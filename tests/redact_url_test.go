package tests

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/loopback"
)

// credentialParams are the query parameters a base URL's credentials go
// in; their values are redacted whatever their length.
var credentialParams = []string{"key", "api_key", "apikey", "token", "access_token", "code", "sig", "signature", "password", "secret"}

// plantedSecret returns a credential of n characters: it starts with Z,
// and its other characters are unreserved in URLs, so that a request's
// URL holds it as it is.
func plantedSecret(n int) string {
	const chars = "ZQJzqj-_~.09"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[i*7%len(chars)]
	}
	b[0] = 'Z'
	return string(b)
}

// Credentials of every length from 1 to 64 in the base URL, under every
// name that says it is one, and as its userinfo, are neither printed
// (one-shot chat, the REPL, show, log, events) nor stored (the REPL's
// error commit). The server is not running, so each error quotes the
// URL that Go's HTTP client failed to post to.
func TestChat_URLCredentialsNeverShownOrStored(t *testing.T) {
	t.Parallel()
	addr, release, err := loopback.Refused()
	require.NoError(t, err)
	defer release()
	const perRun = 10 // one length per name
	for first := 1; first <= 64; first += perRun {
		t.Run(plantedSecret(first), func(t *testing.T) {
			t.Parallel()
			// forms are what must be found nowhere: each credential as
			// the URL writes it and, from 6 characters, alone (a shorter
			// string may occur by chance among a file's bytes).
			var query, forms []string
			planted := func(written, v string) {
				forms = append(forms, written)
				if len(v) >= 6 {
					forms = append(forms, v)
				}
			}
			for i, name := range credentialParams {
				v := plantedSecret(min(first+i, 64))
				query = append(query, name+"="+v)
				planted(name+"="+v, v)
			}
			user := plantedSecret(first + 3)
			planted("//"+user+"@", user)
			base := "http://" + user + "@" + addr + "/v1?" + strings.Join(query, "&")
			s := newSandbox(t).forTest(t).withEnv("OPENAI_BASE_URL", base, "OPENAI_API_KEY", "sk-test", "TRACT_MODEL", testModel)
			s.initRepo()

			var out []string
			r := s.tract("chat", "hello")
			requireExit(t, r, exitModel)
			require.Contains(t, r.Stderr, "?key=[REDACTED]&api_key=[REDACTED]", "the URL is quoted")
			out = append(out, r.Stdout, r.Stderr)
			r = s.tractStdin("hello\n", "chat", "-i", "-V", "json")
			require.Contains(t, r.Stderr, "http://[REDACTED]@", "the URL is quoted")
			out = append(out, r.Stdout, r.Stderr)
			for _, args := range [][]string{{"show", "HEAD"}, {"show", "--json", "HEAD"}, {"log", "--all"}, {"events"}, {"events", "--format", "text"}} {
				r := s.ok(args...)
				out = append(out, r.Stdout, r.Stderr)
			}
			require.Contains(t, out[len(out)-2], "[REDACTED]", "the error was recorded, redacted")
			stored := string(s.storedBytes())
			for _, f := range forms {
				for _, o := range out {
					assert.NotContains(t, o, f)
				}
				assert.NotContains(t, stored, f, "in the repository")
			}
		})
	}
}
