// Package httpauth guards the routes of one HTTP listener: the proxy, the
// JSON API, the web view and MCP of 'tract serve' share one Guard.
//
// A Guard made with a token requires it on every request it wraps, in
// one of three places:
//
//   - "Authorization: Bearer TOKEN" (the OpenAI SDKs, curl),
//   - "x-api-key: TOKEN" (the Anthropic SDKs),
//   - the cookie CookieName, which the login form (Guard.Login: a form at
//     GET /login, POST /login checks the token) sets for a browser. The
//     cookie holds a value derived from the token (an HMAC of it), not the
//     token itself, and is HttpOnly and SameSite=Strict.
//
// Tokens are compared in constant time.
//
// A Guard made without a token serves a loopback listener: every request
// passes, but one whose Host header is not a loopback name (localhost,
// 127.0.0.0/8, ::1, or a name given to WithHosts) is refused, so that a
// web page whose own name was made to resolve to 127.0.0.1 (DNS
// rebinding) cannot read the repository.
//
// With or without a token, a state-changing request (any method but GET,
// HEAD, OPTIONS) that a browser sends from another origin is refused: its
// Origin must name the request's own host, and Sec-Fetch-Site, when the
// browser sends it, must be same-origin or none. Routes wrapped with
// RequireJSON also take only "Content-Type: application/json" bodies,
// which no HTML form can send. Clients other than browsers send neither
// header and pass.
//
// Refusals are *Error values (status, code, message). Guard.Wrap writes
// them as JSON, {"error":{"message":...,"code":...}}, or through the
// function given to WithErrorWriter (the proxy answers in its wire's own
// shape); Guard.Check returns them for a handler that writes its own.
//
// Caveats: the login form does not slow down repeated wrong tokens; a
// token should be long and random. The cookie is marked Secure only when
// the request came over TLS.
package httpauth
