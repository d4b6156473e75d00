// The worker: version, uptime, storage, the byte cap's fill, and the log levels.

import { api, get, seg, metrics, sum } from './api.js';
import { h, fill, notify, fmtBytes, fmtDuration, fmtNumber, td, every } from './dom.js';

const LEVELS = ['ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'];

function levelControl(name, level, reload) {
  const id = `level-${name}`;
  const select = h('select', { id, 'aria-label': `Level of ${name}` }, LEVELS.map((l) => h('option', { value: l, selected: l === level }, l)));
  const set = async () => {
    try {
      await api('PUT', `admin/loggers/${seg(name)}`, { level: select.value });
      notify(`Logger ${name} set to ${select.value}.`);
    } catch (e) { notify(`Setting ${name} failed: ${e.message}`, 'error'); }
    await reload();
  };
  return h('div', { class: 'row' }, select, h('button', { type: 'button', onclick: set, 'aria-label': `Set the level of ${name}` }, 'Set'));
}

async function loggers(box) {
  const reload = () => loggers(box);
  let all;
  try { all = await get('admin/loggers'); } catch (e) {
    fill(box, h('p', { class: 'muted' }, `The log levels are not served on this listener: ${e.message}`));
    return;
  }
  const name = h('input', { id: 'new-logger', placeholder: 'org.apache.kafka.connect', 'aria-label': 'Logger name' });
  const level = h('select', { id: 'new-level', 'aria-label': 'Level' }, LEVELS.map((l) => h('option', { value: l }, l)));
  const add = async (ev) => {
    ev.preventDefault();
    if (!name.value.trim()) return;
    try {
      await api('PUT', `admin/loggers/${seg(name.value.trim())}`, { level: level.value });
      notify(`Logger ${name.value.trim()} set to ${level.value}.`);
    } catch (e) { notify(`Setting ${name.value} failed: ${e.message}`, 'error'); }
    await reload();
  };
  fill(box,
    h('table', { class: 'stack', id: 'loggers' },
      h('thead', {}, h('tr', {}, ['Logger', 'Level', 'Changed'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, Object.entries(all).map(([n, l]) => h('tr', { 'data-logger': n },
        td('Logger', h('code', {}, n)), td('Level', levelControl(n, l.level, reload)),
        td('Changed', l.last_modified ? new Date(l.last_modified).toISOString() : '–'))))),
    h('form', { class: 'row', onsubmit: add }, h('label', { for: 'new-logger' }, 'Another logger'), name, level,
      h('button', { type: 'submit' }, 'Set level')));
}

export async function render(main) {
  const facts = h('dl', { class: 'facts', id: 'worker-facts' });
  const logBox = h('div');
  fill(main, h('h1', {}, 'Worker'),
    h('section', { class: 'card', 'aria-labelledby': 'h-worker' }, h('h2', { id: 'h-worker' }, 'This worker'), facts),
    h('section', { class: 'card', 'aria-labelledby': 'h-loggers' }, h('h2', { id: 'h-loggers' }, 'Log levels'), logBox));
  const root = await get('');
  await loggers(logBox);
  return every(2000, async () => {
    const m = await metrics();
    const started = sum(m, 'process_start_time_seconds');
    const fillRatio = sum(m, 'liteconnect_log_buffer_fill_ratio');
    const fact = (k, v) => [h('dt', {}, k), h('dd', {}, v)];
    fill(facts,
      fact('Version', `${root.version} (commit ${root.commit})`),
      fact('Cluster id', root.kafka_cluster_id),
      fact('Uptime', started ? fmtDuration(Date.now() / 1000 - started) : '–'),
      fact('Connectors, tasks', `${fmtNumber(sum(m, 'kafka_connect_worker_connector_count'))}, ${fmtNumber(sum(m, 'kafka_connect_worker_task_count'))}`),
      fact('Database file', fmtBytes(sum(m, 'liteconnect_storage_file_bytes'))),
      fact('Write-ahead log', fmtBytes(sum(m, 'liteconnect_storage_wal_bytes'))),
      fact('Log held', fmtBytes(sum(m, 'liteconnect_log_bytes'))),
      fact('Byte cap fill', fillRatio === null ? 'no cap (log.buffer.max.bytes unset)'
        : [h('meter', { class: 'meter', min: 0, max: 1, value: fillRatio, 'aria-label': 'Byte cap fill' }), ` ${(fillRatio * 100).toFixed(1)} %`]),
      fact('Memory (RSS)', fmtBytes(sum(m, 'process_resident_memory_bytes'))));
  });
}
