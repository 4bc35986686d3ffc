package web_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tractdag/tract/web"
)

func TestHandler_ServesThePageAndItsAssets(t *testing.T) {
	h := web.Handler()
	tests := []struct {
		method, path string
		status       int
		ctype        string
		body         string
	}{
		{"GET", "/", http.StatusOK, "text/html; charset=utf-8", `<script type="module" src="static/app.js">`},
		{"GET", "/index.html", http.StatusOK, "text/html; charset=utf-8", "<title>tract</title>"},
		{"HEAD", "/", http.StatusOK, "text/html; charset=utf-8", ""},
		{"GET", "/static/app.js", http.StatusOK, "text/javascript; charset=utf-8", "EventSource"},
		{"GET", "/static/graph.js", http.StatusOK, "text/javascript; charset=utf-8", "export class Graph"},
		{"GET", "/static/app.css", http.StatusOK, "text/css; charset=utf-8", ":root"},
		{"GET", "/static/icon.svg", http.StatusOK, "image/svg+xml", "<svg"},
		{"GET", "/static/", http.StatusNotFound, "", "the web view is at /"},
		{"GET", "/static/../web.go", http.StatusNotFound, "", ""},
		{"GET", "/nothing", http.StatusNotFound, "", "the web view is at /"},
		{"POST", "/", http.StatusMethodNotAllowed, "", "GET and HEAD"},
		{"DELETE", "/static/app.js", http.StatusMethodNotAllowed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/", nil)
			req.URL.Path = tt.path // unclean paths as a client may send them
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tt.status, rec.Code, rec.Body.String())
			assert.Equal(t, web.ContentSecurityPolicy, rec.Header().Get("Content-Security-Policy"))
			assert.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
			assert.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))
			assert.Equal(t, "same-origin", rec.Header().Get("Cross-Origin-Resource-Policy"))
			assert.Equal(t, "no-referrer", rec.Header().Get("Referrer-Policy"))
			if tt.ctype != "" {
				assert.Equal(t, tt.ctype, rec.Header().Get("Content-Type"))
			}
			assert.Contains(t, rec.Body.String(), tt.body)
			if tt.method == "HEAD" {
				assert.Empty(t, rec.Body.String())
			}
			if tt.status == http.StatusMethodNotAllowed {
				assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"))
			}
		})
	}
}

// A browser revalidates: the same bytes answer 304 to their ETag.
func TestHandler_RevalidatesByETag(t *testing.T) {
	h := web.Handler()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/static/app.js", nil))
	etag := rec.Header().Get("ETag")
	require.NotEmpty(t, etag)
	assert.Equal(t, "no-cache", rec.Header().Get("Cache-Control"))

	req := httptest.NewRequest("GET", "/static/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusNotModified, rec.Code)
	assert.Empty(t, rec.Body.String())
}

// The policy allows no inline script or style: the page has none, and
// no script builds markup from strings (innerHTML and its kin would
// parse a commit's text as HTML).
func TestStaticFiles_NothingInlineNoMarkupFromStrings(t *testing.T) {
	inline := []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`),                        // a script with a body
		regexp.MustCompile(`<script(?:(?:\s(?:type|async|defer)(?:="[^"]*")?)*)>`), // a script without src
		regexp.MustCompile(`\son[a-z]+\s*=`),                                       // an event handler attribute
		regexp.MustCompile(`\sstyle\s*=`),                                          // a style attribute
		regexp.MustCompile(`<style`),                                               // a style element
		regexp.MustCompile(`(?i)javascript:`),                                      // a script URL
	}
	markup := regexp.MustCompile(`\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval|new Function|setAttribute\(\s*['"]style)\b`)
	err := fs.WalkDir(os.DirFS("static"), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(filepath.Join("static", name))
		require.NoError(t, err)
		text := string(data)
		switch filepath.Ext(name) {
		case ".html", ".svg":
			for _, re := range inline {
				assert.Nil(t, re.FindStringIndex(text), "%s: %s matches %s", name, re.FindString(text), re)
			}
		case ".js":
			assert.Empty(t, markup.FindAllString(text, -1), "%s builds markup from a string", name)
		}
		return nil
	})
	require.NoError(t, err)
}

// Every file under static/ is served, and every asset the page names
// exists.
func TestStaticFiles_PageNamesServedAssets(t *testing.T) {
	srv := httptest.NewServer(web.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/")
	require.NoError(t, err)
	page, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	refs := regexp.MustCompile(`(?:src|href)="([^"]+)"`).FindAllStringSubmatch(string(page), -1)
	require.NotEmpty(t, refs)
	imports := regexp.MustCompile(`from '\./([a-z]+\.js)'`)
	for _, m := range refs {
		resp, err := http.Get(srv.URL + "/" + strings.TrimPrefix(m[1], "/"))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, m[1])
		for _, im := range imports.FindAllStringSubmatch(string(body), -1) {
			r, err := http.Get(srv.URL + "/static/" + im[1])
			require.NoError(t, err)
			r.Body.Close()
			assert.Equal(t, http.StatusOK, r.StatusCode, "%s imports %s", m[1], im[1])
		}
	}
}
