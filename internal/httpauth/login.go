package httpauth

import (
	"html/template"
	"net/http"
	"strings"
	"sync"
)

// LoginPath and LogoutPath are where Login and Logout are meant to be
// mounted; Wrap's RedirectToLogin sends a browser to LoginPath.
const (
	LoginPath  = "/login"
	LogoutPath = "/logout"
)

// maxLoginForm bounds the body of POST /login.
const maxLoginForm = 64 << 10

// cookieMaxAge is how long a browser keeps the login cookie, in seconds.
const cookieMaxAge = 30 * 24 * 60 * 60

// loginPage returns the login form's template, parsed when a form is
// first shown rather than as every command of the CLI starts.
var loginPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>tract · log in</title>
<style>
body{font:16px/1.4 system-ui,sans-serif;display:flex;justify-content:center;margin-top:15vh;color:#222;background:#fafafa}
form{background:#fff;border:1px solid #ddd;border-radius:6px;padding:1.5em 2em;min-width:20em}
h1{font-size:1.2em;margin:0 0 1em}input[type=password]{width:100%;box-sizing:border-box;padding:.4em;font:inherit}
button{margin-top:1em;padding:.4em 1.2em;font:inherit}.err{color:#b00020}
</style></head>
<body><form method="post" action="{{.Action}}">
<h1>tract</h1>
{{if .Message}}<p class="err" role="alert">{{.Message}}</p>{{end}}
<label for="token">Token{{if .Hint}} ({{.Hint}}){{end}}</label>
<input type="password" id="token" name="token" autocomplete="current-password" autofocus required>
<input type="hidden" name="next" value="{{.Next}}">
<button type="submit">Log in</button>
</form></body></html>
`))
})

type loginData struct {
	Action, Next, Message, Hint string
}

// Login returns the handler of LoginPath: GET shows a form that asks
// for the token; POST (a form with the fields "token" and "next") checks
// it in constant time and, when it matches, sets the cookie CookieName
// (HttpOnly, SameSite=Strict, Path=/) and redirects (303) to next, a
// path of this server ("/" when absent or not a local path). A wrong
// token shows the form again with a 401. Without a token, both redirect
// to next: there is nothing to log in to. A POST from another origin is
// refused (login CSRF).
func (g *Guard) Login() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.token == "" && !g.hostAllowed(r.Host) {
			WriteError(w, g.check(r, &checks{}))
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
			next := localPath(r.URL.Query().Get("next"))
			if g.token == "" {
				http.Redirect(w, r, next, http.StatusSeeOther)
				return
			}
			g.form(w, r, http.StatusOK, next, "")
		case http.MethodPost:
			if e := crossOrigin(r); e != nil {
				WriteError(w, e)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxLoginForm)
			if err := r.ParseForm(); err != nil {
				WriteError(w, &Error{Status: http.StatusBadRequest, Code: "bad_request",
					Message: "POST /login takes a form with the field token: " + err.Error()})
				return
			}
			next := localPath(r.PostForm.Get("next"))
			if g.token == "" {
				http.Redirect(w, r, next, http.StatusSeeOther)
				return
			}
			if !equal(strings.TrimSpace(r.PostForm.Get("token")), g.token) {
				g.form(w, r, http.StatusUnauthorized, next, "That is not this server's token.")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: g.cookie, Path: "/", MaxAge: cookieMaxAge,
				HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
			http.Redirect(w, r, next, http.StatusSeeOther)
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			WriteError(w, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: LoginPath + " takes GET (the form) or POST (the form's token), not " + r.Method})
		}
	})
}

// Logout returns the handler of LogoutPath: POST clears the login cookie
// and redirects (303) to LoginPath (to "/" without a token). A POST from
// another origin is refused.
func (g *Guard) Logout() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			WriteError(w, &Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
				Message: LogoutPath + " takes POST, not " + r.Method})
			return
		}
		if e := crossOrigin(r); e != nil {
			WriteError(w, e)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
			HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
		to := LoginPath
		if g.token == "" {
			to = "/"
		}
		http.Redirect(w, r, to, http.StatusSeeOther)
	})
}

func (g *Guard) form(w http.ResponseWriter, r *http.Request, status int, next, message string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	_ = loginPage().Execute(w, loginData{Action: LoginPath, Next: next, Message: message, Hint: g.loginHint})
}

// localPath returns p when it is a path of this server, else "/": a
// login must not redirect elsewhere (an open redirect).
func localPath(p string) string {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") || strings.ContainsAny(p, "\r\n") {
		return "/"
	}
	return p
}
