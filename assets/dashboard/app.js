// The dashboard page: follows the server's view by server-sent events (no polling; EventSource
// reconnects by itself), shows the rollout the URL's fragment names (#/NAMESPACE/PLAN), and sends
// the actions after a confirmation, with the page's CSRF token. Plain JavaScript, no build step.
'use strict';

const CSRF = document.querySelector('meta[name="kwave-csrf"]').content;
const ACTION_TEXT = {
  approve: (r) =>
    `Approve wave ${r.approval.wave}${r.approval.gate ? ` (gate ${r.approval.gate})` : ''} of plan ${r.plan}: the runner goes on to the next wave.`,
  pause: (r) => `Pause plan ${r.plan}: no new pod starts; pods in flight finish; the runner waits for a resume.`,
  resume: (r) => `Resume plan ${r.plan}: the runner goes on.`,
  abort: (r) => `Abort plan ${r.plan}: the runner halts as on a failure and applies the plan's rollback policy.`,
};
let view = { rollouts: [] };
let notice = { text: '', ok: true, id: '' };

const esc = (s) =>
  String(s ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

function age(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
const ago = (iso) => (iso ? `${age(Date.parse(view.generatedAt) - Date.parse(iso))} ago` : '');

function selected() {
  const id = decodeURIComponent(location.hash.replace(/^#\//, ''));
  return view.rollouts.find((r) => r.id === id) || view.rollouts[0];
}

/** Replaces an element's content only when it changed, so focus and charts survive a new view. */
function put(el, html) {
  if (el.dataset.html !== html) {
    el.innerHTML = html;
    el.dataset.html = html;
  }
}

function renderList() {
  const current = selected();
  put(
    document.getElementById('rollouts'),
    view.rollouts
      .map(
        (r) =>
          `<li><a href="#/${esc(r.id)}"${current && r.id === current.id ? ' aria-current="page"' : ''}>` +
          `<span class="name">${esc(r.plan)}</span> <span class="ns">${esc(r.namespace)}</span> ` +
          `<span class="phase phase-${esc(r.phase || 'Unknown')}">${esc(r.phase || 'damaged')}</span></a></li>`,
      )
      .join('') || '<li>No rollout record in these namespaces yet.</li>',
  );
}

const SEGMENTS = [
  ['atTarget', 'at target'],
  ['inFlight', 'in flight'],
  ['failed', 'failed'],
  ['vanished', 'vanished'],
  ['waitingForNode', 'waiting for node'],
  ['left', 'left'],
];

function waveBar(b) {
  const parts = SEGMENTS.filter(([k]) => b[k] > 0);
  const label = parts.map(([k, t]) => `${b[k]} ${t}`).join(', ') || 'no pods';
  const segs = parts.map(([k]) => `<span class="seg seg-${k}" style="flex-grow:${b[k]}"></span>`).join('');
  return (
    `<li class="wave wave-${b.state}"><span class="wave-name">wave ${b.wave}</span>` +
    `<span class="bar" role="img" aria-label="wave ${b.wave}: ${esc(label)}">${segs}</span>` +
    `<span class="wave-text">${b.atTarget}/${b.pods ?? '?'} · ${esc(label)} · ${b.state}</span></li>`
  );
}

function table(head, rows) {
  if (rows.length === 0) return '';
  return (
    `<table><thead><tr>${head.map((h) => `<th scope="col">${esc(h)}</th>`).join('')}</tr></thead><tbody>` +
    rows.map((row) => `<tr>${row.map(cell).join('')}</tr>`).join('') +
    '</tbody></table>'
  );
}

const ISO = /^\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)(\.\d+)?Z$/;

/** A table cell; an ISO time shows as its clock time (UTC), the whole of it in the title. */
function cell(c) {
  const m = ISO.exec(String(c));
  return m
    ? `<td class="time"><time datetime="${esc(c)}" title="${esc(c)}">${m[1]}Z</time></td>`
    : `<td>${esc(c)}</td>`;
}

function section(title, body) {
  return body ? `<section><h3>${esc(title)}</h3>${body}</section>` : '';
}

function summary(r) {
  const c = r.counts;
  const lease = r.lease
    ? `${esc(r.lease.holder)}${r.lease.expired ? ' (expired)' : ''}${r.lease.renewedAt ? `, renewed ${ago(r.lease.renewedAt)}` : ''}`
    : 'free (no runner)';
  return (
    `<h2 id="title">${esc(r.plan)} <span class="phase phase-${esc(r.phase)}">${esc(r.phase)}</span></h2>` +
    `<dl class="facts">` +
    `<dt>namespace</dt><dd>${esc(r.namespace)}</dd>` +
    `<dt>revision</dt><dd>${esc(r.revision)} (${esc(r.direction)})</dd>` +
    `<dt>wave</dt><dd>${r.wave} of ${r.waves}</dd>` +
    `<dt>pods</dt><dd>${c.upgraded} ${r.direction === 'rollback' ? 'reverted' : 'upgraded'}, ${c.in_progress} in progress, ${c.pending} pending, ${c.failed} failed, ${c.skipped} skipped, ${c.vanished} vanished (${r.selected} selected)</dd>` +
    (r.rollback
      ? `<dt>rollback</dt><dd>${esc(r.rollback.scope)}: ${r.rollback.done} of ${r.rollback.pods} reverted, ${r.rollback.failed} failed</dd>`
      : '') +
    `<dt>budget</dt><dd>${r.budget.inFlight} in flight${r.budget.concurrency ? ` of ${r.budget.concurrency} at a time` : ''}${r.budget.maxUnavailable ? `, at most ${r.budget.maxUnavailable} unavailable` : ''}</dd>` +
    `<dt>runner</dt><dd>${esc(r.runner)}</dd>` +
    `<dt>lease</dt><dd>${lease}</dd>` +
    `<dt>started</dt><dd>${esc(r.startedAt)} (${ago(r.startedAt)})${r.endedAt ? `, ended ${ago(r.endedAt)}` : `, updated ${ago(r.updatedAt)}`}</dd>` +
    `</dl>` +
    (r.message ? `<p class="message">${esc(r.message)}</p>` : '')
  );
}

function actions(r) {
  const waits = r.waits.map((w) => `<p class="wait">${esc(w)}</p>`).join('');
  const buttons = r.actions
    .map(
      (a) =>
        `<button type="button" class="action action-${a}${a === 'approve' ? ' primary' : ''}" data-action="${a}">${a[0].toUpperCase() + a.slice(1)}</button>`,
    )
    .join(' ');
  const shown = notice.text && notice.id === r.id;
  return (
    waits +
    (buttons ? `<div class="buttons">${buttons}</div>` : '') +
    `<p id="notice" role="${shown && !notice.ok ? 'alert' : 'status'}" class="${shown ? (notice.ok ? 'ok' : 'refused') : ''}">${shown ? esc(notice.text) : ''}</p>`
  );
}

function gatesHtml(r) {
  return r.gates
    .map((g, i) => {
      const conds = [
        g.successCondition && `success: ${g.successCondition}`,
        g.failureCondition && `failure: ${g.failureCondition}`,
      ]
        .filter(Boolean)
        .join(' · ');
      const rows = g.measurements.map((m) => [
        `${m.index}/${m.count}`,
        m.at,
        m.value === null ? '-' : String(Number(m.value.toPrecision(4))),
        m.phase,
        m.message,
      ]);
      return (
        `<article class="gate" aria-label="gate ${esc(g.gate)} after wave ${g.wave}">` +
        `<h4>${esc(g.gate)} after wave ${g.wave}: <span class="result result-${esc(g.result)}">${esc(g.result)}${g.dryRun ? ' (dry run)' : ''}</span></h4>` +
        (g.message ? `<p>${esc(g.message)}</p>` : '') +
        (conds ? `<p class="conditions">${esc(conds)}</p>` : '') +
        (g.measurements.length > 0 ? `<div class="chart" data-gate="${i}"></div>` : '') +
        table(['#', 'at', 'value', 'phase', 'message'], rows) +
        `</article>`
      );
    })
    .join('');
}

function renderRollout() {
  const main = document.getElementById('rollout');
  const r = selected();
  if (!r) return put(main, '<p>No rollout record in these namespaces yet: it appears once a plan runs.</p>');
  if (r.problem)
    return put(main, `<h2>${esc(r.plan)}</h2><p class="refused">The rollout record is damaged: ${esc(r.problem)}</p>`);
  if (!main.querySelector('#summary'))
    put(
      main,
      ['summary', 'actions', 'waves', 'gates', 'inflight', 'lists'].map((id) => `<div id="${id}"></div>`).join(''),
    );
  put(main.querySelector('#summary'), summary(r));
  put(main.querySelector('#actions'), actions(r));
  put(main.querySelector('#waves'), section('Waves', `<ol class="waves">${r.waveBars.map(waveBar).join('')}</ol>`));
  put(main.querySelector('#gates'), section('Gates', gatesHtml(r)));
  const more = (shown, total) => (total > shown ? `<p>${total - shown} more not shown.</p>` : '');
  put(
    main.querySelector('#inflight'),
    section(
      `Pods in flight (${r.inFlight.total})`,
      table(
        ['pod', 'wave', 'step', 'in step', 'since start'],
        r.inFlight.pods.map((p) => [p.pod, p.wave, p.step, age(p.inStepMs), age(p.sinceMs)]),
      ) + more(r.inFlight.pods.length, r.inFlight.total),
    ) +
      section(
        `Waiting for their node (${r.waitingForNodes.total})`,
        table(
          ['pod', 'node', 'why'],
          r.waitingForNodes.pods.map((w) => [w.pod, w.node, w.message]),
        ) + more(r.waitingForNodes.pods.length, r.waitingForNodes.total),
      ),
  );
  put(
    main.querySelector('#lists'),
    section(
      `Failures (${r.failures.total})`,
      table(
        ['pod', 'wave', 'reason', 'message', 'at'],
        r.failures.latest.map((f) => [f.pod, f.wave, f.reason, f.message, f.at]),
      ),
    ) +
      section(
        'Approvals',
        table(
          ['wave', 'by', 'at'],
          r.approvals.map((a) => [a.wave, a.by, a.at]),
        ),
      ) +
      section(
        'Pause, resume, abort',
        table(
          ['action', 'by', 'at'],
          r.control.map((c) => [c.action, c.by, c.at]),
        ),
      ) +
      section('History', table(['time', 'what'], r.history.map((h) => [h.time, h.message]).reverse())) +
      section(
        "Events (kwave's, in the namespace)",
        table(
          ['time', 'type', 'reason', 'object', 'message'],
          r.events
            .map((e) => [e.time, e.type, e.reason, e.object, e.count > 1 ? `${e.message} (×${e.count})` : e.message])
            .reverse(),
        ),
      ),
  );
  const keep = new Set();
  main.querySelectorAll('.chart').forEach((el) => {
    const g = r.gates[Number(el.dataset.gate)];
    const key = `${r.id}/${g.wave}/${g.gate}`;
    keep.add(key);
    kwaveGateChart.draw(el, key, g);
  });
  kwaveGateChart.prune(keep);
}

function render() {
  renderList();
  renderRollout();
}

async function act(action) {
  const r = selected();
  if (!r) return;
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-text').textContent = ACTION_TEXT[action](r);
  document.getElementById('confirm-ok').textContent = action[0].toUpperCase() + action.slice(1);
  dialog.returnValue = '';
  dialog.showModal();
  document.getElementById('confirm-cancel').focus();
  const answer = await new Promise((resolve) =>
    dialog.addEventListener('close', () => resolve(dialog.returnValue), { once: true }),
  );
  if (answer !== 'ok') return;
  const body = { id: r.id, action, ...(action === 'approve' ? { wave: r.approval.wave } : {}) };
  let result;
  try {
    const res = await fetch('/api/actions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-kwave-csrf': CSRF },
      body: JSON.stringify(body),
    });
    result = await res.json();
  } catch (err) {
    result = { ok: false, message: `the dashboard did not answer: ${err.message}` };
  }
  notice = { text: result.message, ok: result.ok, id: r.id };
  render();
}

document.addEventListener('click', (e) => {
  const button = e.target.closest('button[data-action]');
  if (button) act(button.dataset.action);
});
window.addEventListener('hashchange', () => {
  render();
  document.getElementById('rollout').focus();
});

const connection = document.getElementById('connection');
const source = new EventSource('/api/stream');
source.addEventListener('view', (e) => {
  view = JSON.parse(e.data);
  connection.textContent = `live · ${plural(view.rollouts.length, 'rollout')} · ${new Date(view.generatedAt).toLocaleTimeString()}`;
  connection.className = 'live';
  render();
});
source.addEventListener('error', () => {
  connection.textContent = 'reconnecting to kwave dashboard…';
  connection.className = 'lost';
});
