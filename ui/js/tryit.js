// "Try it": a config's record path run offline on sample records (a sink) or on a few records its task
// polls (a source), through POST /connector-plugins/{p}/config/test. Nothing is created or written.

import { api, get, seg } from './api.js';
import { h, fill } from './dom.js';

const EXAMPLE = '{"key": "k1", "value": {"id": 1, "note": "hello"}, "headers": {"origin": "console"}}';
const MARKS = { delivered: '✔', stored: '✔', dropped: '⊘', failed: '✖', 'not subscribed': '–' };

let pluginTypes = null;
/** The type ('sink' or 'source') of a plugin class, from the plugin list (read once). */
async function typeOf(plugin) {
  if (!plugin) return null;
  pluginTypes = pluginTypes || get('connector-plugins').catch((e) => { pluginTypes = null; throw e; });
  // A class, or its alias as Kafka takes it: the simple name, with or without "Connector".
  const name = plugin.trim();
  const found = (await pluginTypes).find((p) => {
    const simple = p.class.split('.').pop();
    return p.class === name || simple === name || simple.replace(/Connector$/, '') === name;
  });
  return found ? found.type : null;
}

/** The sample records: JSON lines (blank lines skipped), or one JSON list. */
export function parseRecords(text) {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (trimmed.startsWith('[')) {
    let list;
    try { list = JSON.parse(trimmed); } catch (e) { throw new Error(`The records are not a valid JSON list: ${e.message}`); }
    if (!Array.isArray(list)) throw new Error('The records must be JSON lines or one JSON list.');
    return list;
  }
  const out = [];
  text.split('\n').forEach((line, i) => {
    if (!line.trim()) return;
    try { out.push(JSON.parse(line)); } catch (e) { throw new Error(`Line ${i + 1} of the records is not valid JSON: ${e.message}`); }
  });
  return out;
}

const compact = (v) => (v === undefined ? '' : JSON.stringify(v));

/** Connect data in JsonConverter's envelope, shown as its payload (and its schema's type, if any). */
function data(envelope) {
  if (envelope === null || envelope === undefined) return 'null';
  if (typeof envelope === 'object' && 'payload' in envelope) {
    const schema = envelope.schema && envelope.schema.type ? ` · ${envelope.schema.type}` : '';
    return `${compact(envelope.payload)}${schema}`;
  }
  return compact(envelope);
}

function headersText(headers) {
  if (!Array.isArray(headers) || !headers.length) return '';
  return headers.map((x) => `${x.key}: ${'value_b64' in x ? `(base64) ${x.value_b64}` : data(x.value)}`).join('\n');
}

/** Stored bytes as the answer decodes them: JSON, text, or base64 under `<part>_b64`. */
function bytes(rec, part) {
  if (`${part}_b64` in rec) return `(base64) ${rec[`${part}_b64`]}`;
  const v = rec[part];
  if (v === null || v === undefined) return 'null';
  return typeof v === 'string' ? v : compact(v);
}

/** A record's parts as [part, label, text]; `stored` when key and value are bytes, not Connect data. */
function parts(rec, stored) {
  const where = rec.partition === undefined || rec.partition === null ? rec.topic : `${rec.topic} · partition ${rec.partition}`;
  const out = [['topic', 'Topic', where]];
  if (rec.offset !== undefined) out.push(['offset', 'Offset', String(rec.offset)]);
  if (rec.timestamp !== undefined && rec.timestamp !== null) out.push(['timestamp', 'Timestamp', String(rec.timestamp)]);
  out.push(['key', 'Key', stored ? bytes(rec, 'key') : data(rec.key)]);
  out.push(['value', 'Value', stored ? bytes(rec, 'value') : data(rec.value)]);
  const hs = stored ? (rec.headers || []).map((x) => `${x.key}: ${bytes(x, 'value')}`).join('\n') : headersText(rec.headers);
  out.push(['headers', 'Headers', hs || 'none']);
  if (rec.source_partition !== undefined) out.push(['source_partition', 'Source partition', compact(rec.source_partition)]);
  if (rec.source_offset !== undefined) out.push(['source_offset', 'Source offset', compact(rec.source_offset)]);
  return out;
}

/** A record as a list of its parts; those that differ from `before` are marked as changed. */
function recordView(rec, stored, before) {
  const prev = before ? new Map(before.map(([p, , t]) => [p, t])) : null;
  const shown = parts(rec, stored);
  const list = h('dl', { class: 'try-rec' }, shown.map(([part, label, text]) => {
    const changed = prev && prev.get(part) !== text;
    return [h('dt', {}, label, changed ? h('span', { class: 'tag' }, ' changed') : ''),
      h('dd', { 'data-part': part, class: changed ? 'changed' : null, 'data-changed': changed ? 'true' : null }, text)];
  }));
  return { list, shown };
}

function stepTitle(s) {
  if (s.step === 'converters') return 'Read by the converters';
  if (s.step === 'polled') return 'Polled from the task';
  const simple = String(s.class || '').split('.').pop();
  const when = s.predicate ? ` (if ${s.negate ? 'not ' : ''}${s.predicate})` : '';
  return `Transform ${s.alias} (${simple})${when}: ${s.result}`;
}

function stepsView(steps) {
  let before = null;
  const items = steps.map((s) => {
    let body = null;
    if (s.record) {
      // A source's polled record and its transforms' records are Connect data, as a sink's are.
      const view = recordView(s.record, false, before);
      body = view.list;
      before = view.shown;
    }
    return h('li', { 'data-step': s.step, 'data-alias': s.alias || null, 'data-step-result': s.result || null },
      h('span', { class: `try-step-title${s.result === 'failed' ? ' bad' : ''}` }, stepTitle(s)),
      s.error ? h('p', { class: 'bad' }, s.error) : null, body);
  });
  return h('details', { class: 'try-steps' }, h('summary', {}, `Step by step (${steps.length})`), h('ol', {}, items));
}

function outcomeHead(o) {
  const simple = (c) => String(c || '').split('.').pop();
  switch (o.result) {
    case 'delivered': return `delivered to ${o.topic}, partition ${o.partition}`;
    case 'stored': return `stored in ${o.topic}${o.partition !== undefined ? `, partition ${o.partition}` : ''}`;
    case 'dropped': return h('span', {}, 'dropped by transform ', h('code', { 'data-by': o.by }, o.by), ` (${simple(o.class)})`);
    case 'failed': return h('span', {}, 'failed at ', h('code', { 'data-stage': o.stage }, o.stage), ` (${simple(o.class)})`);
    case 'not subscribed': return `not subscribed: the connector does not read ${o.topic}`;
    default: return String(o.result);
  }
}

function outcomeView(o) {
  const kind = { delivered: 'ok', stored: 'ok', failed: 'bad', 'not subscribed': 'warn' }[o.result] || 'idle';
  const children = [h('p', { class: 'try-head' },
    h('span', { class: `try-mark ${kind}`, 'aria-hidden': 'true' }, `${MARKS[o.result] || '?'} `),
    `#${o.index} `, outcomeHead(o))];
  if (o.result === 'delivered' || o.result === 'stored') children.push(recordView(o, o.result === 'stored').list);
  if (o.result === 'failed') {
    children.push(h('p', { class: 'bad try-error' }, o.error));
    if (o.dlq) {
      children.push(h('p', { 'data-dlq': o.dlq.topic }, 'Skipped (errors.tolerance=all); sent to the dead letter queue ',
        h('code', {}, o.dlq.topic), ' as:'), recordView({ topic: o.dlq.topic, ...o.dlq }, true).list);
    } else {
      children.push(h('p', { class: 'muted' }, o.skipped ? 'Skipped (errors.tolerance=all); no dead letter queue.'
        : 'The task would fail here (errors.tolerance=none): the records after it were not run.'));
    }
  }
  if (Array.isArray(o.steps) && o.steps.length) children.push(stepsView(o.steps));
  return h('li', { class: 'try-record', 'data-result': o.result, 'data-index': o.index }, children);
}

function summary(answer) {
  const counts = new Map();
  for (const o of answer.records) counts.set(o.result, (counts.get(o.result) || 0) + 1);
  const each = [...counts].map(([r, n]) => `${n} ${r}`).join(', ');
  const n = answer.records.length;
  return `${answer.type === 'source' ? 'Source' : 'Sink'} test: ${n} record${n === 1 ? '' : 's'}${n ? `: ${each}` : ''}. Nothing was created or written.`;
}

/**
 * The panel. `current()` returns `{plugin, config}` from the form (or throws an Error saying what is
 * missing). Returns `{el, sync}`: `sync()` adapts the panel to the plugin's type (sample records for a
 * sink, a bounded run for a source).
 */
export function tryPanel(current) {
  const records = h('textarea', { id: 'try-records', rows: 5, spellcheck: 'false', 'aria-describedby': 'try-records-doc',
    placeholder: EXAMPLE });
  let touched = false;
  records.addEventListener('input', () => { touched = true; });
  const file = h('input', { type: 'file', id: 'try-file', accept: '.json,.jsonl,.ndjson,.txt,application/json' });
  file.addEventListener('change', async () => {
    const f = file.files && file.files[0];
    if (!f) return;
    records.value = await f.text();
    touched = true;
  });
  const sinkBox = h('div', { id: 'try-sink' },
    h('div', { class: 'field' }, h('label', { for: 'try-records' }, 'Sample records, one JSON object a line'),
      h('p', { class: 'doc', id: 'try-records-doc' }, 'Each with optional topic (default: the first of topics), partition, offset, timestamp, key, value (a JSON string is the text, any other JSON its JSON text; or key_b64, value_b64) and headers.'),
      records),
    h('div', { class: 'field' }, h('label', { for: 'try-file' }, 'Or load them from a file'), file));
  const max = h('input', { id: 'try-max', type: 'number', min: 1, max: 1000, value: '10', inputmode: 'numeric' });
  const sourceBox = h('div', { id: 'try-source', hidden: true },
    h('p', { class: 'doc' }, 'A source runs its task until it gives this many records or 5 s pass; its offsets stay in memory.'),
    h('div', { class: 'field' }, h('label', { for: 'try-max' }, 'Records at most'), max));
  const status = h('p', { id: 'try-status', class: 'muted', 'aria-live': 'polite' });
  const result = h('div', { id: 'try-result' });
  let kind = null;

  const sync = async () => {
    let plugin = null;
    try { plugin = current().plugin; } catch { plugin = null; }
    kind = await typeOf(plugin).catch(() => null);
    sourceBox.hidden = kind !== 'source';
    sinkBox.hidden = kind === 'source';
    if (kind === 'sink' && !touched && !records.value) records.value = EXAMPLE;
  };

  const run = async () => {
    fill(result);
    let plugin, config, body;
    try {
      ({ plugin, config } = current());
      await sync();
      body = { config, steps: true };
      if (kind === 'source') body['max.records'] = Number(max.value) || 10;
      else body.records = parseRecords(records.value);
    } catch (e) {
      status.textContent = '';
      fill(result, h('p', { class: 'bad', id: 'try-error', role: 'alert' }, e.message));
      return;
    }
    status.textContent = kind === 'source' ? 'Running the source task…' : 'Running…';
    runBtn.disabled = true;
    try {
      const answer = await api('POST', `connector-plugins/${seg(plugin)}/config/test`, body);
      status.textContent = summary(answer);
      fill(result, answer.records.length
        ? h('ol', { class: 'try-list' }, answer.records.map(outcomeView))
        : h('p', { class: 'muted' }, 'No record.'));
    } catch (e) {
      status.textContent = '';
      fill(result, h('div', { id: 'try-error', class: 'bad', role: 'alert', 'data-status': e.status },
        h('p', {}, `The test was refused${e.status ? ` (HTTP ${e.status})` : ''}:`), h('pre', { class: 'value' }, e.message)));
    } finally {
      runBtn.disabled = false;
    }
  };
  const runBtn = h('button', { type: 'button', class: 'primary', id: 'try-run', onclick: run }, 'Run');
  const el = h('details', { class: 'try', id: 'try-it', ontoggle: () => { if (el.open) sync(); } },
    h('summary', {}, 'Try it'),
    h('p', { class: 'muted' }, 'Runs this config’s converters, transforms and error handling on records, offline: nothing is created, nothing is written to a topic or a file.'),
    sinkBox, sourceBox, h('div', { class: 'row' }, runBtn), status, result);
  return { el, sync };
}
