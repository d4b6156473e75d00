// One connector: status and actions, tasks, charts, config, offsets and active topics.

import { api, get, seg, metrics, connectorRates } from './api.js';
import { h, fill, stateBadge, notify, ask, td, every, fmtNumber } from './dom.js';
import { actions, traceView } from './connectors.js';
import { chart } from './chart.js';
import { tryPanel } from './tryit.js';
import { streamStatus } from './airbyte.js';

const WINDOW_MS = 5 * 60 * 1000;

function tasksTable(tasks) {
  if (!tasks.length) return h('p', { class: 'muted', id: 'no-tasks' }, 'No tasks.');
  return h('table', { class: 'stack', id: 'tasks' },
    h('thead', {}, h('tr', {}, ['Task', 'State', 'Worker', 'Trace'].map((c) => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, tasks.map((t) => h('tr', { 'data-task': t.id },
      td('Task', String(t.id)), td('State', stateBadge(t.state)), td('Worker', t.worker_id || ''),
      td('Trace', traceView(t.trace) || h('span', { class: 'muted' }, 'none'))))));
}

function configSection(name, path) {
  const area = h('textarea', { id: 'config-json', rows: 12, 'aria-label': 'Connector config (JSON)', spellcheck: 'false' });
  const result = h('div', { id: 'config-result', 'aria-live': 'polite' });
  const parse = () => {
    try { return JSON.parse(area.value); } catch (e) {
      fill(result, h('p', { class: 'err' }, `Not valid JSON: ${e.message}`));
      return null;
    }
  };
  const validate = async () => {
    const config = parse();
    if (!config) return false;
    const cls = config['connector.class'] || '';
    try {
      const answer = await api('PUT', `connector-plugins/${seg(cls)}/config/validate`, config);
      const errors = answer.configs.filter((c) => c.value.errors.length);
      fill(result, errors.length
        ? h('ul', { class: 'err' }, errors.map((c) => h('li', { 'data-error-for': c.value.name }, `${c.value.name}: ${c.value.errors.join(' ')}`)))
        : h('p', {}, 'The config is valid.'));
      return errors.length === 0;
    } catch (e) {
      fill(result, h('p', { class: 'err' }, e.message));
      return false;
    }
  };
  const save = async () => {
    const config = parse();
    if (!config || !(await validate())) return;
    try {
      await api('PUT', `${path}/config`, config);
      notify(`Saved the config of ${name}.`);
    } catch (e) { notify(`Saving the config of ${name} failed: ${e.message}`, 'error'); }
  };
  const trial = tryPanel(() => {
    let config;
    try { config = JSON.parse(area.value); } catch (e) { throw new Error(`The config is not valid JSON: ${e.message}`); }
    if (!config || typeof config !== 'object' || Array.isArray(config)) throw new Error('The config must be a JSON object.');
    if (!config['connector.class']) throw new Error('The config names no connector.class.');
    return { plugin: config['connector.class'], config };
  });
  const load = async () => { area.value = JSON.stringify(await get(`${path}/config`), null, 2); trial.sync(); };
  const section = h('section', { class: 'card', 'aria-labelledby': 'h-config' },
    h('h2', { id: 'h-config' }, 'Config'), area,
    h('div', { class: 'row' },
      h('button', { type: 'button', id: 'config-validate', onclick: validate }, 'Validate'),
      h('button', { type: 'button', class: 'primary', id: 'config-save', onclick: save }, 'Save config'),
      h('button', { type: 'button', onclick: load }, 'Reload')),
    result, trial.el);
  return { section, load };
}

function offsetsSection(name, path) {
  const area = h('textarea', { id: 'offsets-json', rows: 8, 'aria-label': 'Offsets (JSON)', spellcheck: 'false' });
  const why = h('p', { class: 'muted', id: 'offsets-reason' });
  const saveBtn = h('button', { type: 'button', class: 'primary', id: 'offsets-save' }, 'Save offsets');
  const resetBtn = h('button', { type: 'button', class: 'danger', id: 'offsets-reset' }, 'Reset offsets');
  let dirty = false;
  area.addEventListener('input', () => { dirty = true; });
  const load = async () => {
    const answer = await get(`${path}/offsets`);
    area.value = JSON.stringify(answer, null, 2);
    dirty = false;
  };
  saveBtn.addEventListener('click', async () => {
    let body;
    try { body = JSON.parse(area.value); } catch (e) { notify(`The offsets are not valid JSON: ${e.message}`, 'error'); return; }
    try {
      const answer = await api('PATCH', `${path}/offsets`, body);
      notify(`Offsets of ${name}: ${answer && answer.message ? answer.message : 'saved'}`);
      await load();
    } catch (e) { notify(`Altering the offsets of ${name} failed: ${e.message}`, 'error'); }
  });
  resetBtn.addEventListener('click', async () => {
    if (!(await ask(`Reset the offsets of ${name}?`, h('p', {}, `${name} starts over from the beginning when resumed.`), 'Reset offsets'))) return;
    try {
      const answer = await api('DELETE', `${path}/offsets`);
      notify(`Offsets of ${name}: ${answer && answer.message ? answer.message : 'reset'}`);
      await load();
    } catch (e) { notify(`Resetting the offsets of ${name} failed: ${e.message}`, 'error'); }
  });
  let last = null;
  const update = async (state) => {
    const stopped = state === 'STOPPED';
    saveBtn.disabled = !stopped;
    resetBtn.disabled = !stopped;
    area.readOnly = !stopped;
    why.textContent = stopped ? 'The connector is stopped: its offsets can be edited (as {"offsets": [{"partition": …, "offset": …}]}) or reset.'
      : `Offsets can be edited or reset only while the connector is STOPPED; it is ${state}. Stop it first.`;
    if (state !== last && !dirty) await load().catch(() => {});
    last = state;
  };
  const section = h('section', { class: 'card', 'aria-labelledby': 'h-offsets' },
    h('h2', { id: 'h-offsets' }, 'Offsets'), why, area, h('div', { class: 'row' }, saveBtn, resetBtn));
  return { section, update };
}

export async function render(main, name) {
  const path = `connectors/${seg(name)}`;
  const head = h('div', { id: 'connector-head' });
  const tasks = h('div', { id: 'tasks-box' });
  const charts = h('div', { class: 'charts', id: 'charts' });
  const topics = h('div', { id: 'active-topics' });
  const streams = h('section', { class: 'card', 'aria-labelledby': 'h-streams', hidden: true },
    h('h2', { id: 'h-streams' }, 'Airbyte streams'), h('div'));
  const config = configSection(name, path);
  const offsets = offsetsSection(name, path);
  const series = { in: [], out: [], lag: [] };
  fill(main,
    h('p', {}, h('a', { href: '#/connectors' }, '← Connectors')),
    h('h1', {}, name),
    head,
    h('section', { class: 'card', 'aria-labelledby': 'h-tasks' }, h('h2', { id: 'h-tasks' }, 'Tasks'), tasks),
    h('section', { class: 'card', 'aria-labelledby': 'h-metrics' }, h('h2', { id: 'h-metrics' }, 'Metrics'), charts),
    streams,
    config.section,
    offsets.section,
    h('section', { class: 'card', 'aria-labelledby': 'h-topics' }, h('h2', { id: 'h-topics' }, 'Active topics'), topics));
  let gone = false;
  const refresh = async () => {
    if (gone) return;
    let status;
    try { status = await get(`${path}/status`); } catch (e) {
      if (e.status === 404) {
        gone = true;
        fill(head, h('p', { class: 'err', id: 'gone' }, `${name} does not exist (any more). `, h('a', { href: '#/connectors' }, 'Back to the list')));
        return;
      }
      throw e;
    }
    const samples = await metrics().catch(() => []);
    const rates = connectorRates(samples, name);
    const now = Date.now();
    for (const k of Object.keys(series)) {
      series[k].push([now, rates[k]]);
      while (series[k].length && series[k][0][0] < now - WINDOW_MS) series[k].shift();
    }
    const state = status.connector.state;
    if (!document.getElementById('dialog').open) {
      fill(head, h('div', { class: 'row' }, stateBadge(state), h('span', { class: 'muted' }, `${status.type} connector on ${status.connector.worker_id}`)),
        traceView(status.connector.trace),
        h('p', {}, `Records/s in ${fmtNumber(rates.in)}, out ${fmtNumber(rates.out)}, lag ${fmtNumber(rates.lag)}`),
        actions(name, state, async () => { await refresh(); }));
    }
    if (!tasks.querySelector('details[open]')) fill(tasks, tasksTable(status.tasks || []));
    fill(charts, chart('Records in/s', series.in, WINDOW_MS), chart('Records out/s', series.out, WINDOW_MS),
      chart('Sink lag (records)', series.lag, WINDOW_MS));
    const airbyte = streamStatus(samples, name);
    streams.hidden = !airbyte;
    fill(streams.lastChild, airbyte);
    await offsets.update(state);
    const active = await get(`${path}/topics`).catch(() => null);
    const list = active && active[name] ? active[name].topics : [];
    fill(topics, list.length ? h('ul', {}, list.map((t) => h('li', {}, h('a', { href: `#/topics/${seg(t)}` }, t))))
      : h('p', { class: 'muted' }, 'None yet.'));
  };
  await config.load().catch((e) => notify(`Reading the config of ${name} failed: ${e.message}`, 'error'));
  return every(2000, refresh);
}
