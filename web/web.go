package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"time"
)

// files holds the page and its assets, served under /static/ (the page
// itself at /).
//
//go:embed static
var files embed.FS

// ContentSecurityPolicy is the policy every response of the Handler
// carries: the page loads its script, style sheet and icon from its own
// origin and talks to its own API, nothing else, and no page may frame
// it.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// asset is one embedded file, ready to serve.
type asset struct {
	data  []byte
	ctype string
	etag  string
}

// handler serves the assets read once from files.
type handler struct {
	assets  map[string]asset // by URL path: "/", "/static/app.js", …
	modTime time.Time
}

// Handler returns the web view: the page at "/" and its assets under
// "/static/". Any other path is 404 and any method but GET and HEAD
// 405. Responses are revalidated by ETag (the hash of the file's
// bytes), so a new binary's page is never mixed with an old script.
func Handler() http.Handler {
	h := &handler{assets: map[string]asset{}, modTime: time.Now()}
	err := fs.WalkDir(files, "static", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := files.ReadFile(name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		a := asset{
			data:  data,
			ctype: mime.TypeByExtension(path.Ext(name)),
			etag:  `"` + hex.EncodeToString(sum[:12]) + `"`,
		}
		if a.ctype == "" {
			a.ctype = "application/octet-stream"
		}
		if name == "static/index.html" {
			h.assets["/"] = a
			return nil
		}
		h.assets["/"+name] = a
		return nil
	})
	if err != nil {
		// The files are part of the binary: a failure to read them is a
		// build that went wrong, not a condition a caller can handle.
		panic("web: reading the embedded files: " + err.Error())
	}
	return h
}

// ServeHTTP answers with the asset at r's path, its headers saying: the
// policy above, no sniffing of types, no framing, no referrer, and no
// loading of the files by another site's page.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", ContentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cross-Origin-Resource-Policy", "same-origin")
	name := r.URL.Path
	if name == "/index.html" {
		name = "/"
	}
	a, ok := h.assets[name]
	if !ok {
		http.Error(w, "404 page not found: the web view is at /", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hd.Set("Allow", "GET, HEAD")
		http.Error(w, "405 method not allowed: the web view answers GET and HEAD", http.StatusMethodNotAllowed)
		return
	}
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cache-Control", "no-cache")
	hd.Set("ETag", a.etag)
	// ServeContent answers If-None-Match with 304, ranges and HEAD.
	http.ServeContent(w, r, "", h.modTime, bytes.NewReader(a.data))
}
