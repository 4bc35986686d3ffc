// Helpers shared by the view's modules: building DOM nodes (text always
// as text nodes: nothing from the repository is ever parsed as markup)
// and calling the JSON API of the same server.

const SVG_NS = 'http://www.w3.org/2000/svg';

// el builds an HTML element: props are set as properties (className,
// title, …) or, for data-* and aria-*, as attributes; children are
// nodes or strings (added as text), null and false skipped.
export function el(tag, props, ...children) {
  const n = document.createElement(tag);
  setProps(n, props);
  append(n, children);
  return n;
}

// svg builds an SVG element with the given attributes.
export function svg(tag, attrs, ...children) {
  const n = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v !== undefined && v !== null) n.setAttribute(k, String(v));
  }
  append(n, children);
  return n;
}

function setProps(n, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('data-') || k.startsWith('aria-') || k === 'for' || k === 'role') {
      n.setAttribute(k, String(v));
    } else if (k.startsWith('on') && typeof v === 'function') {
      n.addEventListener(k.slice(2), v);
    } else {
      n[k] = v;
    }
  }
}

function append(n, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// clear empties a node and fills it with children.
export function clear(n, ...children) {
  n.replaceChildren();
  append(n, children);
  return n;
}

// short is a hash's first 8 digits, as the CLI prints it.
export function short(hash) {
  return String(hash || '').slice(0, 8);
}

// label names a commit as the CLI's one-line log does: by role for a
// message, by kind otherwise.
export function label(c) {
  switch (c.kind) {
    case 'message': return c.role;
    case 'steering': case 'summary': case 'note': case 'error': return c.kind;
  }
  return `${c.kind}/${c.role}`;
}

// firstLine cuts s at its first line break and at max characters.
export function firstLine(s, max = 300) {
  s = String(s ?? '');
  const i = s.search(/[\r\n]/);
  if (i >= 0) s = s.slice(0, i) + ' …';
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

// when formats an RFC 3339 time in the reader's local time.
export function when(t) {
  if (!t) return '';
  const d = new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
}

// ApiError is an error answer of the API: its status and message.
export class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code || '';
  }
}

// loginURL is where a request refused for want of the token sends the
// reader: the login form, which comes back here.
function toLogin() {
  const next = location.pathname + location.search + location.hash;
  location.assign('login?next=' + encodeURIComponent(next));
}

async function call(path, init) {
  const resp = await fetch(path, { credentials: 'same-origin', ...init });
  if (resp.status === 401) {
    toLogin();
    throw new ApiError(401, 'the server asks for its token: log in');
  }
  const type = resp.headers.get('Content-Type') || '';
  const body = type.includes('json') ? await resp.json().catch(() => null) : null;
  if (!resp.ok) {
    const e = body && body.error;
    const msg = (e && (e.message || e)) || `${resp.status} ${resp.statusText}`;
    throw new ApiError(resp.status, String(msg), e && e.code);
  }
  return body;
}

// get reads an API route (a path relative to the page: "api/…").
export function get(path) {
  return call(path, { headers: { Accept: 'application/json' } });
}

// post sends a JSON body to an API route: a same-origin request with a
// JSON content type, as the server's CSRF check asks.
export function post(path, body) {
  return call(path, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
}

// q builds a query string from an object, leaving out empty values.
export function q(params) {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  }
  const out = s.toString();
  return out ? '?' + out : '';
}
