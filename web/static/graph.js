// The history as a graph: the rows of /api/graph (the layout of
// 'tract log --all --graph': each line of work a column, failed attempts
// and their steering in a column beside the branch) drawn as SVG. Only
// the rows on screen are in the document; pages of rows are fetched as
// the reader scrolls towards them.

import { el, svg, short, label, firstLine, get, q } from './dom.js';

export const ROW_H = 24;
const LANE_W = 14;
const PAD = 10;
const PAGE = 500;     // rows per request
const BIG_PAGE = 1000; // rows per request while the rows on screen are further than a page away (the API's most)
const OVERSCAN = 20;  // rows drawn above and below the screen
const RETRY_MS = 3000; // after a page failed, how long scrolling waits to ask again

// newState is an empty list of rows, with what is derived from them.
function newState() {
  return {
    rows: [],
    index: new Map(),    // hash → row number
    colOrphan: [],       // per column: the line passing down it is an orphan chain's
    next: '',            // the cursor of the next page
    done: false,
    total: 0,
  };
}

// fetchPage reads the page of rows after st's into st.
async function fetchPage(st, limit = PAGE) {
  const page = await get('api/graph' + q({ limit, cursor: st.next }));
  if (page.next && page.next === st.next) throw new Error('the server gave the same page twice');
  addRows(st, page.rows || []);
  st.next = page.next || '';
  st.done = !st.next;
  st.total = st.done ? st.rows.length : Math.max(page.total || 0, st.rows.length);
}

function addRows(st, rows) {
  for (const r of rows) {
    const i = st.rows.length;
    st.rows.push(r);
    st.index.set(r.hash, i);
    // A line is dashed when it is an orphan chain's: the commit's own
    // line (from its column) when the commit is an orphan, a line
    // passing by as it was on the row above.
    const lanes = r.lanes || [];
    const next = [];
    r.edgeOrphan = lanes.map((e) => {
      const o = e.from === r.lane ? !!r.orphan : !!st.colOrphan[e.from];
      next[e.to] = next[e.to] === false ? false : o;
      return o;
    });
    st.colOrphan = next;
  }
}

export class Graph {
  // scroller is the scrolling element, spacer sets its height, win holds
  // the drawn rows; onSelect(hash) is called when a commit is clicked.
  constructor({ scroller, spacer, win, status, onSelect, onFirstDraw }) {
    Object.assign(this, { scroller, spacer, win, status, onSelect, onFirstDraw });
    this.selected = '';
    this.generation = 0;
    this.failedAt = 0;    // when a page last failed
    this.failure = null;  // and why
    this.reset();
    this.frame = 0;
    scroller.addEventListener('scroll', () => this.schedule(), { passive: true });
    window.addEventListener('resize', () => this.schedule());
    win.addEventListener('click', (e) => {
      const t = e.target.closest('[data-hash]');
      if (t) this.onSelect(t.getAttribute('data-hash'));
    });
    scroller.addEventListener('keydown', (e) => this.key(e));
  }

  reset() {
    this.st = newState();
    this.loading = null;
    this.generation++;
  }

  get rows() { return this.st.rows; }
  get done() { return this.st.done; }
  get total() { return this.st.total; }

  // reload reads the history again (a ref moved): the rows down to the
  // screen's are read into a new state, which then replaces the old one
  // at once, so the scroll position and the selection stay.
  async reload() {
    const gen = ++this.generation;
    const want = Math.max(1, Math.min(this.rows.length, this.wantRows()));
    const st = newState();
    do {
      await fetchPage(st, want - st.rows.length > PAGE ? BIG_PAGE : PAGE);
    } while (!st.done && st.rows.length < want && gen === this.generation);
    if (gen !== this.generation) return; // a newer reload or reset won
    this.st = st;
    this.loading = null;
    this.failedAt = 0;
    this.draw();
  }

  indexOf(hash) {
    const i = this.st.index.get(hash);
    return i === undefined ? -1 : i;
  }

  row(hash) {
    const i = this.st.index.get(hash);
    return i === undefined ? undefined : this.rows[i];
  }

  // more fetches the next page of rows (one request at a time), of
  // limit rows.
  more(limit = PAGE) {
    if (this.done) return Promise.resolve();
    if (this.loading) return this.loading;
    if (Date.now() - this.failedAt < RETRY_MS) return Promise.reject(this.failure);
    const gen = this.generation;
    const st = this.st;
    this.loading = fetchPage(st, limit)
      .then(() => {
        if (gen === this.generation) {
          this.loading = null;
          this.schedule();
        }
      })
      .catch((err) => {
        if (gen === this.generation) {
          this.loading = null;
          this.failedAt = Date.now();
          this.failure = err;
        }
        throw err;
      });
    return this.loading;
  }

  wantRows() {
    return Math.ceil((this.scroller.scrollTop + this.scroller.clientHeight) / ROW_H) + OVERSCAN;
  }

  schedule() {
    if (!this.frame) this.frame = requestAnimationFrame(() => { this.frame = 0; this.draw(); });
  }

  // draw puts the rows on screen (and a few around them) in the document.
  draw() {
    const known = this.done ? this.rows.length : Math.max(this.total, this.rows.length + 1);
    this.spacer.style.height = known * ROW_H + 'px';
    const top = this.scroller.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_H) - OVERSCAN);
    const last = Math.min(this.rows.length, Math.ceil((top + this.scroller.clientHeight) / ROW_H) + OVERSCAN);
    if (!this.done && last + OVERSCAN >= this.rows.length) {
      const far = Math.floor(top / ROW_H) - this.rows.length > PAGE;
      this.more(far ? BIG_PAGE : PAGE).catch((err) => this.fail(err));
    }
    this.win.style.top = first * ROW_H + 'px';
    let width = 1;
    for (let i = Math.max(0, first - 1); i < last; i++) {
      const r = this.rows[i];
      width = Math.max(width, (r.lane || 0) + 1);
      for (const e of r.lanes || []) width = Math.max(width, e.from + 1, e.to + 1);
    }
    const x = (col) => PAD + col * LANE_W;
    const y = (i) => (i - first) * ROW_H + ROW_H / 2;
    const edges = svg('g', {});
    const dots = svg('g', {});
    const texts = [];
    for (let i = Math.max(0, first - 1); i < last; i++) {
      const r = this.rows[i];
      (r.lanes || []).forEach((e, k) => {
        const x1 = x(e.from), x2 = x(e.to), y1 = y(i), y2 = y(i + 1);
        const d = x1 === x2 ? `M${x1} ${y1}V${y2}` : `M${x1} ${y1}C${x1} ${y1 + ROW_H / 2} ${x2} ${y1 + ROW_H / 2} ${x2} ${y2}`;
        edges.append(svg('path', { d, class: r.edgeOrphan[k] ? 'edge orphan' : 'edge' }));
      });
      if (i < first) continue;
      const cls = ['dot', 'k-' + r.kind];
      if (r.orphan) cls.push('orphan');
      if (r.failure) cls.push('failure');
      if (r.hash === this.selected) cls.push('selected');
      dots.append(svg('circle', { cx: x(r.lane || 0), cy: y(i), r: 5, class: cls.join(' '), 'data-hash': r.hash },
        svg('title', {}, r.failure ? `failed attempt: ${r.diagnosis || ''}` : label(r))));
      texts.push(this.rowText(r, i - first, PAD + width * LANE_W));
    }
    const graph = svg('svg', {
      width: PAD + width * LANE_W, height: Math.max(0, last - first) * ROW_H,
      class: 'lanes', role: 'img', 'aria-label': 'commit graph',
    }, edges, dots);
    this.win.replaceChildren(graph, ...texts);
    this.status.textContent = this.rows.length === 0 && this.done
      ? 'No commits yet.'
      : `${this.rows.length.toLocaleString()}${this.done ? '' : ' of ' + (this.total ? this.total.toLocaleString() : 'more')} ${this.done && this.rows.length === 1 ? 'commit' : 'commits'}`;
    if (this.onFirstDraw && (this.rows.length > 0 || this.done)) {
      const f = this.onFirstDraw;
      this.onFirstDraw = null;
      f();
    }
  }

  rowText(r, k, left) {
    const cls = ['row', 'k-' + r.kind];
    if (r.orphan) cls.push('orphan');
    if (r.failure) cls.push('failure');
    if (r.note) cls.push('noted');
    if (r.hash === this.selected) cls.push('selected');
    const refs = (r.refs || []).map((ref) => el('span', { className: ref.startsWith('HEAD') ? 'ref head' : 'ref' }, ref));
    const n = el('div', { className: cls.join(' '), 'data-hash': r.hash, title: r.note ? `${r.hash}\n${r.note}` : r.hash },
      el('span', { className: 'hash' }, short(r.hash)),
      refs,
      el('span', { className: 'label' }, label(r)), ': ',
      el('span', { className: 'text' }, firstLine(r.text)),
      r.failure ? el('span', { className: 'diag' }, '✗ ' + firstLine(r.diagnosis || 'failed', 160)) : null,
      r.note ? el('span', { className: 'note' }, r.note) : null);
    n.style.top = k * ROW_H + 'px';
    n.style.paddingLeft = left + 'px';
    return n;
  }

  // select marks hash as the selected commit, scrolling to it if it is
  // among the rows read.
  select(hash, scroll) {
    this.selected = hash;
    const i = this.st.index.get(hash);
    if (scroll && i !== undefined) {
      const top = i * ROW_H, s = this.scroller;
      if (top < s.scrollTop || top + ROW_H > s.scrollTop + s.clientHeight) {
        s.scrollTop = Math.max(0, top - s.clientHeight / 3);
      }
    }
    this.draw();
  }

  key(e) {
    const moves = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 };
    const d = moves[e.key];
    if (!d || this.rows.length === 0) return;
    e.preventDefault();
    const i = this.st.index.get(this.selected);
    const to = Math.min(this.rows.length - 1, Math.max(0, i === undefined ? 0 : i + d));
    this.onSelect(this.rows[to].hash);
  }

  fail(err) {
    this.status.textContent = 'Could not read the history: ' + err.message;
  }
}
