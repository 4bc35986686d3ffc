// Package web is the web view of a repository that `tract serve` shows at
// "/": an http.Handler serving the page and its script, style sheet and
// icon, embedded in the binary (plain HTML, CSS and JavaScript: nothing to
// build, no library). The page reads everything it shows from the JSON
// API under /api/ of the same server (docs/json.md gives the shapes):
// the branches, the history drawn as a graph in SVG with failed attempts
// and their steering beside the branch, a commit's text, metadata,
// provenance and diagnoses, a failed attempt beside the accepted answer
// as a diff, the task statistics and the pending escalations, with a
// form to answer them. It follows the repository live through the API's
// event stream (/api/live), so what an agent commits appears without a
// reload, and draws only the rows on screen, so a history of 100,000
// commits opens as fast as a small one. docs/proxy.md describes the view.
//
// The Handler answers GET and HEAD only. Every response carries a
// Content-Security-Policy of default-src 'self' (no inline script or
// style, no other origin), and the page sets every text from the
// repository as text, never as markup. Authentication is not the
// Handler's: `tract serve` puts it behind the same token check as the
// API.
package web
