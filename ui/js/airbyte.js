// Airbyte sources: the create form's fields from the source's SPEC, and the per-stream status of a
// connector's page (from the `liteconnect_airbyte_*` metrics).

import { api, seg, sum } from './api.js';
import { h, fill, td, fmtNumber } from './dom.js';

const COMMAND = 'airbyte.command';
const CONFIG = 'airbyte.config';

/** Whether `plugin` (a class or an alias) is the Airbyte source connector. */
export function isAirbyte(plugin) {
  return /(^|\.)AirbyteSource(Connector)?$/.test(plugin || '');
}

/** `airbyte.config`'s text as an object ({} when empty or not an object). */
function configOf(text) {
  try {
    const parsed = JSON.parse(text || '{}');
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? parsed : {};
  } catch { return null; }
}

/** The value of a SPEC field's text as the property's type wants it. */
function typed(prop, text) {
  const types = [].concat(prop.type || []);
  if ((types.includes('integer') || types.includes('number')) && text.trim() !== '' && Number.isFinite(Number(text))) return Number(text);
  if (types.includes('boolean') && (text === 'true' || text === 'false')) return text === 'true';
  if ((types.includes('object') || types.includes('array')) && text.trim() !== '') {
    try { return JSON.parse(text); } catch { return text; }
  }
  return text;
}

function specInput(name, prop, value) {
  const common = { id: `spec-${name}`, 'data-spec': name, 'aria-describedby': `spec-doc-${name}` };
  const shown = value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
  const dflt = prop.default === undefined ? null : `default: ${typeof prop.default === 'object' ? JSON.stringify(prop.default) : prop.default}`;
  const choices = prop.enum || ([].concat(prop.type || []).includes('boolean') ? [true, false] : null);
  if (choices) {
    return h('select', common, h('option', { value: '' }, `(${dflt || 'unset'})`),
      choices.map((v) => h('option', { value: String(v), selected: String(v) === shown }, String(v))));
  }
  return h('input', { ...common, type: prop.airbyte_secret ? 'password' : 'text', autocomplete: 'off', value: shown, placeholder: dflt });
}

/** One field per top-level property of the SPEC's `connectionSpecification`. */
function specFields(schema, current) {
  const required = new Set(schema.required || []);
  const props = Object.entries(schema.properties || {})
    .sort(([a, pa], [b, pb]) => (pa.order ?? 1e9) - (pb.order ?? 1e9) || Number(required.has(b)) - Number(required.has(a)));
  return props.map(([name, prop]) => h('div', { class: 'field', 'data-spec-field': name },
    h('label', { for: `spec-${name}` }, prop.title || name, ' ', h('code', {}, prop.title ? `(${name})` : ''),
      required.has(name) ? h('span', { class: 'req', title: 'required' }, ' * required') : ''),
    specInput(name, prop, current[name]),
    h('p', { class: 'doc', id: `spec-doc-${name}` }, prop.description || '')));
}

/**
 * Adds the SPEC's fields to the create form when the plugin is the Airbyte source: fetched when
 * `airbyte.command` changes; their values are written into `airbyte.config`, whose text stays editable.
 */
export function specForm(form, plugin) {
  if (!isAirbyte(plugin)) return;
  const command = form.querySelector(`[name="${COMMAND}"]`);
  const config = form.querySelector(`[name="${CONFIG}"]`);
  if (!command || !config) return;
  config.type = 'text';
  const box = h('fieldset', { id: 'airbyte-spec' }, h('legend', {}, "The source's config (its SPEC)"),
    h('p', { class: 'muted', id: 'airbyte-spec-status' }, `Fill in ${COMMAND} to see the source's fields.`));
  config.closest('.field').after(box);
  let schema = null;
  const load = async () => {
    const status = box.querySelector('#airbyte-spec-status');
    if (!command.value.trim()) return;
    status.textContent = 'Asking the source for its SPEC…';
    try {
      const spec = await api('PUT', `connector-plugins/${seg(plugin)}/config/spec`, { [COMMAND]: command.value });
      schema = spec.connectionSpecification || {};
      fill(box, h('legend', {}, "The source's config (its SPEC)"),
        h('p', { class: 'muted', id: 'airbyte-spec-status' }, `These fields make up ${CONFIG}; nested objects can be edited there as JSON.`),
        specFields(schema, configOf(config.value) || {}));
    } catch (e) {
      schema = null;
      fill(box, h('legend', {}, "The source's config (its SPEC)"), h('p', { class: 'err', id: 'airbyte-spec-status' }, e.message));
    }
  };
  command.addEventListener('change', load);
  box.addEventListener('input', (ev) => {
    const name = ev.target.dataset.spec;
    if (!name || !schema) return;
    ev.stopPropagation();
    const current = configOf(config.value);
    if (!current) return;
    if (ev.target.value === '') delete current[name];
    else current[name] = typed(schema.properties[name] || {}, ev.target.value);
    config.value = JSON.stringify(current);
    config.dataset.touched = '1';
    config.dispatchEvent(new Event('input', { bubbles: true }));
  });
}

/** Per-stream figures of an Airbyte connector from the metrics; null when it has none. */
export function streamStatus(samples, connector) {
  const m = { connector };
  const running = sum(samples, 'liteconnect_airbyte_sync_running', m);
  if (running === null) return null;
  const streams = [...new Set(samples.filter((s) => s.name === 'liteconnect_airbyte_records_read_total' && s.labels.connector === connector)
    .map((s) => s.labels.stream))].sort();
  const ok = sum(samples, 'liteconnect_airbyte_last_sync_success', m);
  const duration = sum(samples, 'liteconnect_airbyte_last_sync_duration_seconds', m);
  const last = ok === null ? 'none finished yet' : `${ok ? 'succeeded' : 'failed'} in ${fmtNumber(duration, 2)} s`;
  const when = (secs) => (secs ? new Date(secs * 1000).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : 'none yet');
  return h('div', { id: 'airbyte-status' },
    h('p', { id: 'airbyte-sync' }, `Sync ${running ? 'in progress' : 'not running'}; syncs finished: ${fmtNumber(sum(samples, 'liteconnect_airbyte_syncs_total', m))}; last sync: ${last}.`),
    streams.length ? h('table', { class: 'stack', id: 'airbyte-streams' },
      h('thead', {}, h('tr', {}, ['Stream', 'Records read', 'Last state commit'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, streams.map((s) => h('tr', { 'data-stream': s },
        td('Stream', s),
        td('Records read', fmtNumber(sum(samples, 'liteconnect_airbyte_records_read_total', { connector, stream: s }))),
        td('Last state commit', when(sum(samples, 'liteconnect_airbyte_last_state_commit_timestamp_seconds', { connector, stream: s })))))))
      : h('p', { class: 'muted' }, 'No stream has sent a record yet.'));
}
