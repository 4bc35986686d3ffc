// tract's web view: the sidebar (branches, escalations), the graph, and
// the detail pane (a commit, a failed attempt's diff, the statistics, an
// escalation's form), kept up to date by the API's event stream.

import { el, clear, short, label, when, firstLine, get, post, q, ApiError } from './dom.js';
import { Graph } from './graph.js';

const $ = (id) => document.getElementById(id);
const detail = $('detail');
let view = { kind: 'none' }; // what the detail pane shows, to refresh it

// ---- errors ----------------------------------------------------------

let errTimer = 0;
function showError(err) {
  if (err instanceof ApiError && err.status === 401) return; // on the way to the login form
  const box = $('error');
  box.textContent = String(err && err.message ? err.message : err);
  box.hidden = false;
  clearTimeout(errTimer);
  errTimer = setTimeout(() => { box.hidden = true; }, 8000);
}
window.addEventListener('unhandledrejection', (e) => showError(e.reason));

// ---- the graph -------------------------------------------------------

const graph = new Graph({
  scroller: $('graph'), spacer: $('graph-spacer'), win: $('graph-window'), status: $('graph-status'),
  onSelect: (hash) => showCommit(hash).catch(showError),
  onFirstDraw: () => {
    performance.mark('tract-graph-drawn');
    document.body.setAttribute('data-graph-drawn', String(Math.round(performance.now())));
  },
});

// ---- header and sidebar ----------------------------------------------

const ZERO = /^0+$/;

async function refreshStatus() {
  const s = await get('api/status');
  clear($('repo'), s.path || '');
  const head = s.detached ? 'HEAD (detached)' : 'HEAD -> ' + (s.branch || '');
  clear($('head'), el('span', { className: 'ref head' }, head), ' ',
    ZERO.test(s.head || '0')
      ? el('span', { className: 'dim' }, 'no commits yet')
      : [el('button', { type: 'button', className: 'link', title: s.head, onclick: () => showCommit(s.head).catch(showError) }, short(s.head)),
        el('span', { className: 'dim' }, ` · ${s.length} commits · ~${s.tokens} tokens`)]);
}

// FILTER_FROM is how many branches it takes for the sidebar to offer a
// filter (a proxy names a branch per conversation: there may be many).
const FILTER_FROM = 12;
let branchList = [];

async function refreshBranches() {
  branchList = await get('api/branches');
  $('branch-count').textContent = branchList.length > FILTER_FROM ? String(branchList.length) : '';
  $('branch-filter').hidden = branchList.length <= FILTER_FROM;
  drawBranches();
}

function drawBranches() {
  const f = $('branch-filter').hidden ? '' : $('branch-filter').value.trim().toLowerCase();
  const shown = f ? branchList.filter((b) => b.name.toLowerCase().includes(f)) : branchList;
  clear($('branches'), shown.map((b) => el('li', { className: b.current ? 'current' : '' },
    el('button', {
      type: 'button', title: b.name, 'data-branch': b.name,
      onclick: () => { if (!ZERO.test(b.hash)) showCommit(b.hash).catch(showError); },
    }, el('span', { className: 'name' }, b.current ? '● ' + b.name : b.name), el('span', { className: 'hash' }, short(b.hash))))));
}
$('branch-filter').addEventListener('input', drawBranches);

async function refreshEscalations() {
  const list = await get('api/escalations');
  const pending = list.filter((e) => e.state === 'pending');
  $('esc-count').textContent = pending.length ? String(pending.length) : '';
  $('esc-none').hidden = list.length > 0;
  clear($('escalations'), list.map((e) => el('li', { className: e.state },
    el('button', { type: 'button', 'data-escalation': e.id, title: e.question, onclick: () => showEscalation(e.id).catch(showError) },
      el('span', { className: 'name' }, `${e.id} · ${e.task || e.branch}`),
      el('span', { className: e.state === 'pending' ? 'bad' : 'dim' }, e.state)))));
}

// ---- a commit ----------------------------------------------------------

function commitLink(hash) {
  return el('button', { type: 'button', className: 'link', title: hash, onclick: () => showCommit(hash).catch(showError) }, short(hash));
}

function usageText(u) {
  if (!u) return '';
  return `${u.prompt_tokens ?? 0} prompt + ${u.completion_tokens ?? 0} completion = ${u.total_tokens ?? 0} tokens`;
}

function dl(pairs) {
  const items = pairs.filter(([, v]) => v !== undefined && v !== null && v !== '');
  if (!items.length) return null;
  return el('dl', {}, items.map(([k, v]) => [el('dt', {}, k), el('dd', {}, v)]));
}

function diagnosisBox(f, fallback) {
  if (f && typeof f === 'object') {
    return el('div', { className: 'diagnosis' },
      el('span', { className: 'type' }, f.failure_type || 'failed'), ': ', f.error || '',
      f.details && f.details !== f.error ? el('div', { className: 'dim' }, f.details) : null);
  }
  return el('div', { className: 'diagnosis' }, fallback);
}

async function showCommit(hash) {
  graph.select(hash, true);
  history.replaceState(null, '', '#commit=' + hash);
  const c = await get('api/commits/' + encodeURIComponent(hash));
  if (graph.selected !== hash) return; // another click came first
  view = { kind: 'commit', hash };
  const m = c.meta || {};
  const row = graph.row(c.hash);
  const failed = !!m.failure || (c.role === 'assistant' && !!m.diagnosis && m.valid === false);
  const p = m.provenance;
  const parts = [
    el('h3', {}, 'Commit'),
    el('div', { className: 'title k-' + c.kind },
      el('span', { className: 'label' }, label(c)),
      el('span', { className: 'hash', title: c.hash }, short(c.hash)),
      (c.refs || []).map((r) => el('span', { className: 'ref' }, r)),
      row && row.orphan ? el('span', { className: 'dim' }, chainNote(c.hash) || 'off every branch (orphan)') : null,
      el('span', { className: 'dim' }, when(c.time))),
    el('pre', { className: 'text', 'data-commit-text': c.hash }, c.text),
  ];
  if (c.lost_parent) {
    parts.push(el('p', { className: 'bad' }, `History lost before here: the salvage did not recover its parent ${short(c.lost_parent)}.`));
  }
  if (failed || m.diagnosis) {
    parts.push(el('h3', {}, c.kind === 'steering' ? 'Steering after' : 'Diagnosis'),
      failed ? diagnosisBox(m.failure, m.diagnosis) : el('div', { className: 'diagnosis' }, m.diagnosis));
  }
  const diffBox = el('div', { className: 'diffbox' });
  if (failed) parts.push(el('h3', {}, 'Beside the accepted answer'), diffBox);
  parts.push(el('h3', {}, 'Provenance'), dl([
    ['model', m.model], ['task', m.task], ['attempt', m.attempt],
    ['validators', Array.isArray(m.validators) ? m.validators.join(', ') : undefined],
    ['valid', m.valid === undefined ? undefined : (m.valid ? 'yes' : 'no')],
    ['duration', m.duration_ms !== undefined ? `${m.duration_ms} ms` : undefined],
    ['usage', usageText(m.usage)],
    ['summarizes', Array.isArray(m.sources) && m.sources.length ? m.sources.map((h) => [commitLink(h), ' ']) : undefined],
    ['tokens', m.tokens_before !== undefined ? `${m.tokens_before} before, ${m.tokens_after} after${m.tokens_estimated ? ' (estimated)' : ''}` : undefined],
    ['parents', (c.parents || []).length ? c.parents.map((h) => [commitLink(h), ' ']) : 'none (a root)'],
    ['committed', when(c.time)],
  ]) || el('p', { className: 'dim' }, 'No provenance recorded.'));
  if (p) {
    parts.push(el('h3', {}, 'Turn'), dl([
      ['attempts', p.attempts], ['model', p.model],
      ['restore point', p.restore ? commitLink(p.restore) : undefined],
      ['usage, all attempts', usageText(p.usage)],
    ]));
    if ((p.diagnoses || []).length) {
      parts.push(el('p', { className: 'dim' }, 'Diagnoses of the attempts before it:'),
        p.diagnoses.map((d) => el('div', { className: 'diagnosis' }, d)));
    }
  }
  if (c.meta) parts.push(el('details', {}, el('summary', {}, 'Metadata'), el('pre', {}, JSON.stringify(c.meta, null, 2))));
  clear(detail, parts);
  if (failed) {
    diffBox.append(el('p', { className: 'dim' }, 'Looking for the accepted answer…'));
    showDiff(c, diffBox).catch((err) => clear(diffBox, el('p', { className: 'msg-bad' }, err.message)));
  }
}

// chainNote says what orphaned the chain an orphan commit is on, as the
// graph's row that ends the chain says it ('' when not read yet).
function chainNote(hash) {
  const rows = graph.rows;
  for (let i = graph.indexOf(hash); i >= 0 && i < rows.length && rows[i].orphan; i++) {
    if (rows[i].note) return rows[i].note;
  }
  return '';
}

// ---- a failed attempt beside the accepted answer ----------------------

// showDiff puts a failed attempt beside the answer its turn accepted,
// which /api/diff finds when given the attempt alone.
async function showDiff(c, box) {
  let d;
  try {
    d = await get('api/diff' + q({ a: c.hash }));
  } catch (err) {
    if (!(err instanceof ApiError) || err.status >= 500) throw err;
    clear(box, el('p', { className: 'dim' }, `No accepted answer beside it (${err.message}).`));
    return;
  }
  const a = d.a || c, b = d.b;
  const lines = (d.lines || []).map(normalizeLine);
  const left = [], right = [];
  for (const l of lines) {
    if (l.op !== 'add') left.push(el('span', { className: l.op === 'del' ? 'line del' : 'line' }, l.text));
    if (l.op !== 'del') right.push(el('span', { className: l.op === 'add' ? 'line add' : 'line' }, l.text));
  }
  clear(box, el('div', { className: 'diff', 'data-diff': '' },
    el('div', { className: 'col' }, el('h4', {}, el('span', { className: 'bad' }, 'failed attempt '), commitLink(a.hash)), el('pre', {}, left)),
    el('div', { className: 'col' }, el('h4', {}, el('span', { className: 'good' }, 'accepted answer '), commitLink(b.hash)), el('pre', {}, right))));
}

// normalizeLine reads a line of /api/diff: op "=" in both texts, "-"
// only in a's, "+" only in b's.
function normalizeLine(l) {
  const op = String(l.op || '=');
  if (op === '-') return { op: 'del', text: l.text ?? '' };
  if (op === '+') return { op: 'add', text: l.text ?? '' };
  return { op: 'same', text: l.text ?? '' };
}

// ---- statistics --------------------------------------------------------

// showStats shows tract stats: of every task, or of the tasks whose id
// starts with task (tract stats --task PREFIX).
async function showStats(task = '') {
  const s = await get('api/stats' + q({ task }));
  view = { kind: 'stats', task };
  graph.select('', false);
  const filter = el('input', { type: 'search', name: 'task', value: task, placeholder: 'task id prefix', 'aria-label': 'tasks whose id starts with' });
  const form = el('form', { className: 'stats-filter', 'data-stats-filter': '' }, filter,
    task ? el('button', { type: 'button', className: 'link', onclick: () => showStats().catch(showError) }, 'all tasks') : null);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    showStats(filter.value.trim()).catch(showError);
  });
  const fig = (k, v) => el('div', { className: 'figure' }, el('div', { className: 'v' }, String(v)), el('div', { className: 'k' }, k));
  const table = (head, rows, onRow) => el('table', {}, el('thead', {}, el('tr', {}, head.map((h, i) => el('th', { className: rows.length && typeof rows[0][i] === 'number' ? 'num' : '' }, h)))),
    el('tbody', {}, rows.map((r, k) => el('tr', { className: onRow ? 'pick' : '', onclick: onRow ? () => onRow(k) : null },
      r.map((v, i) => el('td', { className: i && typeof v === 'number' ? 'num' : '' }, String(v)))))));
  const parts = [
    el('h3', {}, task ? `Task statistics: ${task}…` : 'Task statistics'), form,
    el('div', { className: 'figures', 'data-stats': '' },
      fig('tasks', s.total_tasks), fig('first-attempt success', `${(s.first_attempt_success_pct ?? 0).toFixed(1)}%`),
      fig('retried', s.retried), fig('retry successes', s.retry_successes), fig('fixes', s.fixes),
      fig('escalations', s.escalations), fig('skipped', s.skipped), fig('aborted', s.aborted),
      fig('mean attempts', (s.mean_attempts ?? 0).toFixed(2)),
      fig('tokens on failed attempts', s.tokens_failed), fig('tokens on accepted', s.tokens_accepted)),
  ];
  const ft = Object.entries(s.failure_types || {}).sort((a, b) => b[1] - a[1]);
  if (ft.length) parts.push(el('h3', {}, 'Failure types'), table(['type', 'count'], ft));
  if ((s.top_diagnoses || []).length) {
    parts.push(el('h3', {}, 'Common diagnoses'), table(['diagnosis', 'count'], s.top_diagnoses.map((d) => [d.diagnosis, d.count])));
  }
  const tasks = s.tasks || [];
  if (tasks.length) {
    const shown = tasks.slice(0, 500);
    parts.push(el('h3', {}, 'Tasks'), table(['task', 'turns', 'attempts', 'result'],
      shown.map((t) => [t.task_id || '(turns without a task id)', t.turns, t.attempts, t.result + (t.escalated ? ' (escalated)' : '')]),
      (k) => { if (shown[k].task_id) showStats(shown[k].task_id).catch(showError); }));
    if (tasks.length > shown.length) parts.push(el('p', { className: 'dim' }, `and ${tasks.length - shown.length} more (tract stats lists them all)`));
  }
  clear(detail, parts);
}

// ---- search ----------------------------------------------------------------

const SEARCH_LIMIT = 200;

// showSearch lists the commits whose texts hold the words of query
// (tract search), newest first.
async function showSearch(query) {
  const res = await get('api/search' + q({ q: query, limit: SEARCH_LIMIT }));
  view = { kind: 'search', query };
  const commits = res.commits || [];
  clear(detail,
    el('h3', {}, `Search: ${res.query || query}`),
    commits.length
      ? el('ul', { className: 'results', 'data-search': '' }, commits.map((c) => el('li', {
        'data-hash': c.hash, title: c.hash, onclick: () => showCommit(c.hash).catch(showError),
      }, el('span', { className: 'hash' }, short(c.hash)), el('span', { className: 'label k-' + c.kind }, label(c) + ':'), firstLine(c.text, 200))))
      : el('p', { className: 'dim' }, 'No commit holds these words.'),
    commits.length >= SEARCH_LIMIT ? el('p', { className: 'dim' }, `The newest ${SEARCH_LIMIT} matches.`) : null);
}

$('search').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const query = $('search-q').value.trim();
  if (query) showSearch(query).catch(showError);
});

// ---- escalations ---------------------------------------------------------

async function showEscalation(id) {
  const e = await get('api/escalations/' + encodeURIComponent(id));
  view = { kind: 'escalation', id };
  graph.select(e.tip || '', true);
  const parts = [
    el('h3', {}, 'Escalation ' + e.id),
    dl([['state', e.state], ['branch', e.branch], ['task', e.task], ['reason', e.reason],
      ['round', e.round], ['attempts', `${e.attempts} of ${e.max_attempts} this round, ${e.total_attempts} in all`],
      ['last attempt', e.tip ? commitLink(e.tip) : undefined], ['note', e.commit ? commitLink(e.commit) : undefined],
      ['created', when(e.created)]]),
    el('h3', {}, 'Question'), el('pre', {}, e.question || ''),
  ];
  if ((e.failures || []).length) parts.push(el('h3', {}, 'Failures'), e.failures.map((f) => diagnosisBox(f)));
  if (e.last_answer) parts.push(el('h3', {}, 'Last answer'), el('pre', {}, e.last_answer));
  parts.push(el('h3', {}, 'Answer'));
  if (e.answer) {
    parts.push(dl([['answer', e.answer.resolution], ['instruction', e.answer.instruction], ['by', e.answer.by], ['at', when(e.answer.at)]]));
  } else {
    parts.push(answerForm(e));
  }
  clear(detail, parts);
}

function answerForm(e) {
  const action = el('select', { name: 'action' },
    el('option', { value: 'retry' }, 'retry: a fresh round of attempts'),
    el('option', { value: 'fix' }, 'fix: a fresh round with this guidance'),
    el('option', { value: 'skip' }, 'skip: give the task up'),
    el('option', { value: 'abort' }, 'abort: stop there'));
  const text = el('textarea', { name: 'text', placeholder: 'the guidance for the model (fix)' });
  const by = el('input', { name: 'by', type: 'text', placeholder: 'your name (optional)', value: localStorage.getItem('tract.by') || '' });
  const msg = el('p', { className: 'msg', 'aria-live': 'polite' });
  const submit = el('button', { type: 'submit' }, 'Answer');
  const form = el('form', { className: 'answer', 'data-escalation-form': e.id },
    el('label', {}, 'Answer', action), el('label', {}, 'Guidance', text), el('label', {}, 'Answered by', by), submit, msg);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    if (action.value === 'fix' && !text.value.trim()) {
      clear(msg, el('span', { className: 'msg-bad' }, 'A fix needs its guidance: write what the model should do.'));
      return;
    }
    submit.disabled = true;
    localStorage.setItem('tract.by', by.value.trim());
    try {
      const body = { action: action.value, by: by.value.trim() };
      if (action.value === 'fix') body.text = text.value;
      await post('api/escalations/' + encodeURIComponent(e.id) + '/answer', body);
      clear(msg, el('span', { className: 'msg-ok' }, `Answered: ${action.value}.`));
      await refreshEscalations();
      await showEscalation(e.id);
    } catch (err) {
      clear(msg, el('span', { className: 'msg-bad' }, err.message));
      submit.disabled = false;
    }
  });
  return form;
}

// ---- live updates --------------------------------------------------------

// refreshSoon refreshes what the events named: at once when nothing is
// being refreshed, else once the refresh under way is done (and at most
// every REFRESH_GAP ms), so a burst of commits costs a few refreshes and
// a steady stream of them never starves the page.
const REFRESH_GAP = 300;
const RETRY_GAP = 1500; // after a refresh failed
const REFRESH_TRIES = 3; // failed refreshes tried again before the error is shown
let failures = 0;
let want = new Set();
let refreshing = false;
let timer = 0;
function refreshSoon(...what) {
  for (const w of what) want.add(w);
  if (!refreshing && !timer) timer = setTimeout(refreshNow, 30);
}

async function refreshNow() {
  timer = 0;
  refreshing = true;
  const todo = want;
  want = new Set();
  const jobs = [];
  if (todo.has('graph')) jobs.push(graph.reload(), refreshStatus(), refreshBranches());
  if (todo.has('escalations')) jobs.push(refreshEscalations());
  if (view.kind === 'stats') jobs.push(showStats());
  if (view.kind === 'escalation' && todo.has('escalations')) jobs.push(showEscalation(view.id));
  const failed = (await Promise.allSettled(jobs)).filter((r) => r.status === 'rejected');
  refreshing = false;
  if (failed.length && failures < REFRESH_TRIES) {
    // The server may be restarting: try again, a little later.
    failures++;
    for (const w of todo) want.add(w);
    timer = setTimeout(refreshNow, RETRY_GAP);
    return;
  }
  failed.forEach((r) => showError(r.reason));
  failures = 0;
  if (want.size) timer = setTimeout(refreshNow, REFRESH_GAP);
}

// connectLive follows /api/live. EventSource reconnects by itself after
// a network error; after a refusal (the server restarted with another
// token, the cookie expired) it gives up, and the page tries again a
// little later, through a request that leads to the login form if need
// be. A reconnection refreshes everything: events may have been missed.
function connectLive() {
  const badge = $('live');
  const src = new EventSource('api/live');
  let opened = false;
  src.addEventListener('open', () => {
    badge.textContent = 'live';
    badge.className = 'live on';
    if (opened) refreshSoon('graph', 'escalations');
    opened = true;
  });
  src.addEventListener('error', () => {
    badge.className = 'live off';
    if (src.readyState !== EventSource.CLOSED) {
      badge.textContent = 'reconnecting';
      return;
    }
    badge.textContent = 'offline';
    setTimeout(() => {
      get('api/status').then(() => { connectLive(); refreshSoon('graph', 'escalations'); }, () => setTimeout(connectLive, 5000));
    }, 3000);
  });
  src.addEventListener('ref', (ev) => {
    let d = {};
    try { d = JSON.parse(ev.data); } catch { /* a ref moved: enough */ }
    refreshSoon('graph', String(d.ref || '').startsWith('refs/escalations/') ? 'escalations' : 'graph');
  });
  src.addEventListener('escalation', () => refreshSoon('escalations', 'graph'));
}

// ---- start -----------------------------------------------------------------

$('show-stats').addEventListener('click', () => showStats().catch(showError));

async function start() {
  const jobs = [graph.more(), refreshStatus(), refreshBranches(), refreshEscalations()];
  connectLive();
  for (const r of await Promise.allSettled(jobs)) if (r.status === 'rejected') showError(r.reason);
  const m = /^#commit=([0-9a-f]{4,64})$/.exec(location.hash);
  if (m) showCommit(m[1]).catch(showError);
}
start();
