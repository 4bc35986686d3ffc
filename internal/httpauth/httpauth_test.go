package httpauth_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/internal/httpauth"
)

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })

type req struct {
	method, host, path, body string
	header                   map[string]string
}

func do(h http.Handler, q req) *httptest.ResponseRecorder {
	if q.method == "" {
		q.method = http.MethodGet
	}
	if q.path == "" {
		q.path = "/api/status"
	}
	r := httptest.NewRequest(q.method, q.path, strings.NewReader(q.body))
	r.Host = q.host
	if r.Host == "" {
		r.Host = "127.0.0.1:7878"
	}
	for k, v := range q.header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestGuard_WithoutToken(t *testing.T) {
	h := httpauth.New("", httpauth.WithHosts("devbox")).Wrap(ok, httpauth.RequireJSON())
	json := map[string]string{"Content-Type": "application/json"}
	for _, tc := range []struct {
		name   string
		req    req
		status int
		code   string
	}{
		{"loopback v4", req{host: "127.0.0.1:7878"}, 204, ""},
		{"loopback v4 other address", req{host: "127.1.2.3"}, 204, ""},
		{"loopback v6", req{host: "[::1]:7878"}, 204, ""},
		{"localhost", req{host: "localhost:7878"}, 204, ""},
		{"localhost upper case, trailing dot", req{host: "LOCALHOST.:7878"}, 204, ""},
		{"a name ending in .localhost", req{host: "ui.localhost:7878"}, 204, ""},
		{"a host given to WithHosts", req{host: "devbox:7878"}, 204, ""},
		{"DNS rebinding", req{host: "evil.example:7878"}, 403, httpauth.CodeForbiddenHost},
		{"a LAN address", req{host: "192.168.1.5:7878"}, 403, httpauth.CodeForbiddenHost},
		{"localhost as a subdomain prefix", req{host: "localhost.evil.example"}, 403, httpauth.CodeForbiddenHost},
		{"POST JSON without Origin", req{method: "POST", header: json}, 204, ""},
		{"POST JSON same origin", req{method: "POST", header: map[string]string{"Content-Type": "application/json; charset=utf-8",
			"Origin": "http://127.0.0.1:7878", "Sec-Fetch-Site": "same-origin"}}, 204, ""},
		{"POST from another origin", req{method: "POST", header: map[string]string{"Content-Type": "application/json",
			"Origin": "http://evil.example"}}, 403, httpauth.CodeCrossOrigin},
		{"POST cross-site by Sec-Fetch-Site", req{method: "POST", header: map[string]string{"Content-Type": "application/json",
			"Sec-Fetch-Site": "cross-site"}}, 403, httpauth.CodeCrossOrigin},
		{"POST same-site is not same-origin", req{method: "POST", header: map[string]string{"Content-Type": "application/json",
			"Sec-Fetch-Site": "same-site"}}, 403, httpauth.CodeCrossOrigin},
		{"POST as a form", req{method: "POST", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, httpauth.CodeUnsupportedMediaType},
		{"POST as text/plain", req{method: "POST", header: map[string]string{"Content-Type": "text/plain"}}, 415, httpauth.CodeUnsupportedMediaType},
		{"POST without a content type", req{method: "POST"}, 415, httpauth.CodeUnsupportedMediaType},
		{"GET from another origin reads", req{header: map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}}, 204, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.req)
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.code != "" {
				assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
				assert.Contains(t, w.Body.String(), `"code":"`+tc.code+`"`)
				assert.Contains(t, w.Body.String(), `"message":"`)
			}
		})
	}
}

func TestGuard_WithToken(t *testing.T) {
	g := httpauth.New("s3cret")
	h := g.Wrap(ok)
	login := loginCookie(t, g)
	for _, tc := range []struct {
		name   string
		req    req
		status int
	}{
		{"no token", req{}, 401},
		{"bearer", req{header: map[string]string{"Authorization": "Bearer s3cret"}}, 204},
		{"x-api-key", req{header: map[string]string{"x-api-key": "s3cret"}}, 204},
		{"cookie from the login", req{header: map[string]string{"Cookie": login.String()}}, 204},
		{"the token itself as the cookie", req{header: map[string]string{"Cookie": httpauth.CookieName + "=s3cret"}}, 401},
		{"wrong bearer", req{header: map[string]string{"Authorization": "Bearer s3cret2"}}, 401},
		{"prefix of the token", req{header: map[string]string{"Authorization": "Bearer s3cre"}}, 401},
		{"basic auth", req{header: map[string]string{"Authorization": "Basic czNjcmV0"}}, 401},
		{"any Host with the token", req{host: "tract.example.org", header: map[string]string{"Authorization": "Bearer s3cret"}}, 204},
		{"cross-origin POST with the cookie", req{method: "POST", header: map[string]string{"Cookie": login.String(),
			"Origin": "http://evil.example"}}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(h, tc.req)
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			if tc.status == 401 {
				assert.Equal(t, `Bearer realm="tract"`, w.Header().Get("WWW-Authenticate"))
				assert.NotContains(t, w.Body.String(), "s3cret")
			}
		})
	}
}

func loginCookie(t *testing.T, g *httpauth.Guard) *http.Cookie {
	t.Helper()
	w := do(g.Login(), req{method: "POST", path: "/login", body: url.Values{"token": {"s3cret"}, "next": {"/log?x=1"}}.Encode(),
		header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
	require.Equal(t, http.StatusSeeOther, w.Code, w.Body.String())
	assert.Equal(t, "/log?x=1", w.Header().Get("Location"))
	cookies := w.Result().Cookies()
	require.Len(t, cookies, 1)
	c := cookies[0]
	assert.Equal(t, httpauth.CookieName, c.Name)
	assert.True(t, c.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, c.SameSite)
	assert.Equal(t, "/", c.Path)
	assert.NotContains(t, c.Value, "s3cret")
	return &http.Cookie{Name: c.Name, Value: c.Value}
}

func TestLogin(t *testing.T) {
	g := httpauth.New("s3cret")
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for _, tc := range []struct {
		name     string
		req      req
		status   int
		location string
		body     string
	}{
		{"the form", req{path: "/login?next=/x"}, 200, "", `name="token"`},
		{"the form keeps next", req{path: "/login?next=/x"}, 200, "", `value="/x"`},
		{"wrong token", req{method: "POST", path: "/login", body: "token=nope", header: form}, 401, "", "not this server&#39;s token"},
		{"right token, no next", req{method: "POST", path: "/login", body: "token=s3cret", header: form}, 303, "/", ""},
		{"no open redirect", req{method: "POST", path: "/login", body: "token=s3cret&next=//evil.example/", header: form}, 303, "/", ""},
		{"no open redirect by URL", req{method: "POST", path: "/login", body: "token=s3cret&next=https://evil.example/", header: form}, 303, "/", ""},
		{"login CSRF", req{method: "POST", path: "/login", body: "token=s3cret",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}}, 403, "", "cross_origin"},
		{"other method", req{method: "DELETE", path: "/login"}, 405, "", "takes GET"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := do(g.Login(), tc.req)
			assert.Equal(t, tc.status, w.Code, w.Body.String())
			assert.Equal(t, tc.location, w.Header().Get("Location"))
			assert.Contains(t, w.Body.String(), tc.body)
			if tc.status != 303 {
				assert.Empty(t, w.Result().Cookies())
			}
		})
	}
}

func TestLogin_WithoutToken(t *testing.T) {
	g := httpauth.New("")
	w := do(g.Login(), req{path: "/login?next=/graph"})
	assert.Equal(t, http.StatusSeeOther, w.Code)
	assert.Equal(t, "/graph", w.Header().Get("Location"))
	w = do(g.Login(), req{path: "/login", host: "evil.example"})
	assert.Equal(t, http.StatusForbidden, w.Code)
}

func TestLogout(t *testing.T) {
	g := httpauth.New("s3cret")
	w := do(g.Logout(), req{method: "POST", path: "/logout"})
	assert.Equal(t, http.StatusSeeOther, w.Code)
	assert.Equal(t, "/login", w.Header().Get("Location"))
	require.Len(t, w.Result().Cookies(), 1)
	assert.Equal(t, -1, w.Result().Cookies()[0].MaxAge)
	assert.Equal(t, http.StatusMethodNotAllowed, do(g.Logout(), req{path: "/logout"}).Code)
}

// A page of the web view sends a browser without the token to the login
// form, and comes back to where it was.
func TestGuard_RedirectToLogin(t *testing.T) {
	g := httpauth.New("s3cret")
	h := g.Wrap(ok, httpauth.RedirectToLogin())
	w := do(h, req{path: "/commits/abc?x=1"})
	assert.Equal(t, http.StatusSeeOther, w.Code)
	assert.Equal(t, "/login?next=%2Fcommits%2Fabc%3Fx%3D1", w.Header().Get("Location"))
	assert.Equal(t, http.StatusUnauthorized, do(h, req{method: "POST", header: map[string]string{"Content-Type": "application/json"}}).Code)
}

func TestGuard_ErrorWriter(t *testing.T) {
	var got *httpauth.Error
	h := httpauth.New("s3cret").Wrap(ok, httpauth.WithErrorWriter(func(w http.ResponseWriter, r *http.Request, e *httpauth.Error) {
		got = e
		w.WriteHeader(e.Status)
	}))
	w := do(h, req{})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	require.NotNil(t, got)
	assert.Equal(t, httpauth.CodeUnauthorized, got.Code)
}

func TestAuthorized(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	assert.False(t, httpauth.Authorized(r, ""), "no token authorizes nothing")
	r.Header.Set("Authorization", "Bearer ")
	assert.False(t, httpauth.Authorized(r, ""))
	r.Header.Set("Authorization", "Bearer  t ")
	assert.True(t, httpauth.Authorized(r, "t"))
}

func TestLogin_Hint(t *testing.T) {
	w := do(httpauth.New("s3cret", httpauth.WithLoginHint("--token of the server")).Login(), req{path: "/login"})
	assert.Contains(t, w.Body.String(), "Token (--token of the server)")
	assert.NotContains(t, w.Body.String(), "s3cret")
}

// A route that takes the token in its headers only refuses the login
// cookie.
func TestGuard_HeadersOnly(t *testing.T) {
	g := httpauth.New("s3cret")
	h := g.Wrap(ok, httpauth.HeadersOnly())
	w := do(h, req{header: map[string]string{"Cookie": loginCookie(t, g).String()}})
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.NotContains(t, w.Body.String(), "/login")
	assert.Equal(t, http.StatusNoContent, do(h, req{header: map[string]string{"Authorization": "Bearer s3cret"}}).Code)
}
