// The connectors list, refreshed every 2 s, and the actions shared with a connector's page.

import { api, get, seg, metrics, connectorRates } from './api.js';
import { h, fill, stateBadge, notify, ask, fmtNumber, td, every } from './dom.js';

const STATES = ['RUNNING', 'PAUSED', 'STOPPED', 'FAILED', 'UNASSIGNED', 'RESTARTING'];

/** Runs one action and shows what the API answered. */
async function run(label, name, call, done) {
  try {
    const answer = await call();
    let detail = '';
    if (answer && typeof answer === 'object' && answer.connector) detail = ` (connector ${answer.connector.state})`;
    else if (answer && answer.message) detail = `: ${answer.message}`;
    notify(`${label} ${name}: done${detail}.`, 'ok');
  } catch (e) {
    notify(`${label} ${name} failed: ${e.message}`, 'error');
  }
  if (done) await done();
}

/** The action buttons for a connector in `state`; `done` runs after each. */
export function actions(name, state, done) {
  const path = `connectors/${seg(name)}`;
  const button = (label, onclick, cls) =>
    h('button', { type: 'button', class: cls, onclick, 'data-action': label.toLowerCase(), 'aria-label': `${label} ${name}` }, label);
  const restart = async () => {
    const tasks = h('input', { type: 'checkbox', id: 'restart-tasks', checked: true });
    const failed = h('input', { type: 'checkbox', id: 'restart-failed' });
    const ok = await ask(`Restart ${name}?`, [
      h('p', {}, h('label', { for: 'restart-tasks' }, tasks, ' Include tasks (includeTasks)')),
      h('p', {}, h('label', { for: 'restart-failed' }, failed, ' Only failed instances (onlyFailed)')),
    ], 'Restart');
    if (!ok) return;
    const q = `includeTasks=${tasks.checked}&onlyFailed=${failed.checked}`;
    await run('Restart', name, () => api('POST', `${path}/restart?${q}`), done);
  };
  const remove = async () => {
    const ok = await ask(`Delete ${name}?`, h('p', {}, `The connector ${name}, its config, statuses and offsets are deleted. This cannot be undone.`), `Delete ${name}`);
    // On the connector's own page there is nothing left to show: back to the list.
    const after = async () => {
      if (/^#\/connectors\/./.test(location.hash)) location.hash = '#/connectors';
      else if (done) await done();
    };
    if (ok) await run('Delete', name, () => api('DELETE', path), after);
  };
  const s = String(state).toUpperCase();
  return h('div', { class: 'list-actions' },
    s !== 'PAUSED' && s !== 'STOPPED' && button('Pause', () => run('Pause', name, () => api('PUT', `${path}/pause`), done)),
    s !== 'RUNNING' && button('Resume', () => run('Resume', name, () => api('PUT', `${path}/resume`), done)),
    s !== 'STOPPED' && button('Stop', () => run('Stop', name, () => api('PUT', `${path}/stop`), done)),
    button('Restart', restart),
    button('Delete', remove, 'danger'));
}

/**
 * The line of a trace that says what went wrong: the innermost "Caused by:" (not a wrapper such as
 * "Tolerance exceeded in error handler"), else the first line.
 */
export function causeLine(trace) {
  const lines = trace.split('\n').map((l) => l.trim()).filter((l) => l);
  const causes = lines.filter((l) => l.startsWith('Caused by:')).map((l) => l.slice('Caused by:'.length).trim());
  return causes.length ? causes[causes.length - 1] : (lines[0] || '');
}

/** The cause line of a trace, and the whole trace one click away. */
export function traceView(trace) {
  if (!trace) return null;
  const first = causeLine(trace);
  return h('details', { class: 'trace-box' },
    h('summary', { class: 'firstline' }, first),
    h('pre', { class: 'trace' }, trace));
}

function firstTrace(status) {
  const tasks = status.tasks || [];
  const failed = tasks.find((t) => t.state === 'FAILED' && t.trace);
  if (failed) return failed.trace;
  if (status.connector && status.connector.trace) return status.connector.trace;
  const retrying = tasks.find((t) => t.trace);
  return retrying ? retrying.trace : null;
}

function row(name, entry, samples, refresh) {
  const status = entry.status || { connector: {}, tasks: [] };
  const info = entry.info || { config: {} };
  const tasks = status.tasks || [];
  const running = tasks.filter((t) => t.state === 'RUNNING').length;
  const failed = tasks.filter((t) => t.state === 'FAILED').length;
  const taskText = `${running}/${tasks.length}` + (failed ? ` (${failed} failed)` : '');
  const state = status.connector.state || 'UNASSIGNED';
  const rates = connectorRates(samples, name);
  const cls = info.config['connector.class'] || '';
  return h('tr', { 'data-connector': name, 'data-state': state },
    td('Name', h('a', { href: `#/connectors/${seg(name)}` }, name)),
    td('Type', status.type || info.type || ''),
    td('Class', h('span', { title: cls }, cls.split('.').pop())),
    td('State', [stateBadge(state), traceView(firstTrace(status))]),
    td('Tasks', h('span', { 'data-tasks': `${running}/${tasks.length}`, 'data-failed': failed }, taskText), 'num'),
    td('In/s', h('span', { 'data-rate': 'in' }, fmtNumber(rates.in)), 'num'),
    td('Out/s', h('span', { 'data-rate': 'out' }, fmtNumber(rates.out)), 'num'),
    td('Lag', fmtNumber(rates.lag), 'num'),
    td('Actions', actions(name, state, refresh)));
}

export async function render(main) {
  const filter = h('input', { type: 'search', id: 'filter-name', placeholder: 'Filter by name', 'aria-label': 'Filter by name' });
  const stateSel = h('select', { id: 'filter-state', 'aria-label': 'Filter by state' },
    h('option', { value: '' }, 'All states'), STATES.map((s) => h('option', { value: s }, s)));
  const body = h('tbody');
  const summary = h('p', { class: 'muted', id: 'list-summary' });
  let data = {};
  let samples = [];
  const draw = () => {
    const text = filter.value.trim().toLowerCase();
    const names = Object.keys(data).sort().filter((n) => n.toLowerCase().includes(text)
      && (!stateSel.value || (data[n].status?.connector?.state === stateSel.value)));
    const refresh = () => load(true);
    fill(body, names.map((n) => row(n, data[n], samples, refresh)));
    if (!names.length) body.append(h('tr', {}, h('td', { colspan: 9 }, Object.keys(data).length ? 'No connector matches the filter.' : 'No connectors yet. ', h('a', { href: '#/new' }, 'Create one'))));
    fill(summary, `${names.length} of ${Object.keys(data).length} connectors · refreshed ${new Date().toLocaleTimeString('en-GB')}`);
  };
  const load = async (force = false) => {
    // Redrawing while a dialog is open, a trace is expanded or a row has the focus would take them away.
    const [list, m] = await Promise.all([
      get('connectors?expand=status&expand=info'),
      metrics().catch(() => []),
    ]);
    data = list || {};
    samples = m;
    if (!force && (document.getElementById('dialog').open || body.querySelector('details[open]') || body.contains(document.activeElement))) {
      return;
    }
    draw();
  };
  filter.addEventListener('input', draw);
  stateSel.addEventListener('change', draw);
  fill(main,
    h('div', { class: 'row' }, h('h1', {}, 'Connectors'), h('a', { href: '#/new', class: 'button' }, 'New connector')),
    h('div', { class: 'row filters' }, filter, stateSel),
    summary,
    h('section', { class: 'card' },
      h('table', { class: 'stack', id: 'connectors' },
        h('thead', {}, h('tr', {}, ['Name', 'Type', 'Class', 'State', 'Tasks', 'In/s', 'Out/s', 'Lag', 'Actions']
          .map((c, i) => h('th', { class: i >= 4 && i <= 7 ? 'num' : null, scope: 'col' }, c)))),
        body)));
  return every(2000, load);
}
