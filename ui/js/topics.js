// Topics of the local log, and a record browser per partition (records framed by a Schema Registry
// converter shown decoded, with their schema).

import { get, seg, metrics } from './api.js';
import { h, fill, notify, fmtNumber, fmtBytes, td, every } from './dom.js';

const BINARY = { Accept: 'application/vnd.kafka.binary.v2+json' };

/** Per topic: partitions, records, bytes and end offsets summed from the metrics. */
function byTopic(samples) {
  const topics = new Map();
  for (const s of samples) {
    const t = s.labels.topic;
    if (!t || !s.name.startsWith('liteconnect_log_')) continue;
    if (!topics.has(t)) topics.set(t, { partitions: new Set(), records: 0, bytes: 0, end: 0 });
    const e = topics.get(t);
    e.partitions.add(s.labels.partition);
    if (s.name === 'liteconnect_log_records') e.records += s.value;
    if (s.name === 'liteconnect_log_bytes') e.bytes += s.value;
    if (s.name === 'liteconnect_log_end_offset') e.end += s.value;
  }
  return topics;
}

async function list(main) {
  const body = h('tbody');
  const seen = new Map();
  fill(main, h('h1', {}, 'Topics'),
    h('section', { class: 'card' }, h('table', { class: 'stack', id: 'topics' },
      h('thead', {}, h('tr', {}, ['Topic', 'Partitions', 'Records', 'Bytes', 'Records/s'].map((c, i) => h('th', { scope: 'col', class: i ? 'num' : null }, c)))),
      body)));
  return every(2000, async () => {
    const [names, samples] = await Promise.all([get('topics'), metrics().catch(() => [])]);
    const now = Date.now();
    const stats = byTopic(samples);
    fill(body, (names || []).sort().map((t) => {
      const s = stats.get(t);
      // Records/s: end offsets over the last 10 s of samples.
      const history = seen.get(t) || [];
      if (s) history.push([now, s.end]);
      while (history.length > 2 && history[1][0] <= now - 10000) history.shift();
      seen.set(t, history);
      const [first, last] = [history[0], history[history.length - 1]];
      const rate = first && last[0] > first[0] ? Math.max(0, (last[1] - first[1]) / ((last[0] - first[0]) / 1000)) : null;
      return h('tr', { 'data-topic': t },
        td('Topic', h('a', { href: `#/topics/${seg(t)}`, class: 'name', title: t }, t)),
        td('Partitions', s ? s.partitions.size : '–', 'num'),
        td('Records', s ? fmtNumber(s.records) : '–', 'num'),
        td('Bytes', s ? fmtBytes(s.bytes) : '–', 'num'),
        td('Records/s', fmtNumber(rate), 'num'));
    }));
    if (!names || !names.length) body.append(h('tr', {}, h('td', { colspan: 5 }, 'No topics yet.')));
  });
}

function bytesOf(b64) {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) out[i] = bin.charCodeAt(i);
  return out;
}

/** Bytes as pretty JSON when they parse, else text when UTF-8, else hex. */
export function show(b64) {
  if (b64 === null || b64 === undefined) return h('span', { class: 'muted' }, 'null');
  const bytes = bytesOf(b64);
  let text;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); } catch {
    const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    return h('pre', { class: 'value', 'data-kind': 'hex' }, hex);
  }
  try {
    const json = JSON.parse(text);
    if (typeof json === 'object' && json !== null) return h('pre', { class: 'value', 'data-kind': 'json' }, JSON.stringify(json, null, 2));
  } catch { /* not JSON: text */ }
  return h('pre', { class: 'value', 'data-kind': 'text' }, text);
}

/** A key or value framed by a Schema Registry converter: decoded, with its schema ID and subject (the
 * stored bytes when `raw`, or when it could not be decoded, with why). */
function showField(b64, decoded, raw) {
  if (!decoded || raw) return show(b64);
  if (decoded.error) {
    return h('div', {}, h('p', { class: 'schema-tag bad', 'data-schema-id': decoded.schema_id },
      `Schema ${decoded.schema_id}: not decoded (${decoded.error})`), show(b64));
  }
  const subject = decoded.subject ? ` · ${decoded.subject}` : '';
  return h('div', { 'data-decoded': 'true' },
    h('p', { class: 'schema-tag', 'data-schema-id': decoded.schema_id },
      h('a', { href: decoded.subject ? `#/schemas/${seg(decoded.subject)}` : '#/schemas' },
        `${decoded.schema_type} schema ${decoded.schema_id}${subject}`)),
    h('pre', { class: 'value', 'data-kind': 'decoded' }, JSON.stringify(decoded.value, null, 2)));
}

function recordRow(r, raw) {
  const headers = r.headers || [];
  return h('tr', { 'data-offset': r.offset },
    td('Offset', String(r.offset), 'num'),
    td('Timestamp', r.timestamp ? new Date(r.timestamp).toISOString() : '–'),
    td('Key', h('span', { 'data-part': 'key' }, showField(r.key, r.key_decoded, raw))),
    td('Value', h('span', { 'data-part': 'value' }, showField(r.value, r.value_decoded, raw))),
    td('Headers', headers.length ? h('ul', {}, headers.map((x) => h('li', {}, h('code', {}, x.key), ': ', show(x.value)))) : h('span', { class: 'muted' }, 'none')));
}

/** Reads up to `count` records of a partition from `from` onwards (never past `end`). */
async function readFrom(base, from, end, count) {
  const out = [];
  let next = from;
  while (out.length < count && next < end) {
    const batch = await get(`${base}/records?offset=${next}&timeout=0&metadata=true&decode=true`, BINARY);
    if (!batch.length) break;
    for (const r of batch) if (out.length < count && r.offset < end) out.push(r);
    next = batch[batch.length - 1].offset + 1;
  }
  return out;
}

async function browser(main, topic) {
  const info = await get(`topics/${seg(topic)}`);
  const partition = h('select', { id: 'partition' }, info.partitions.map((p) => h('option', { value: p.partition }, `Partition ${p.partition}`)));
  const from = h('input', { id: 'from-offset', type: 'number', min: 0, placeholder: 'start or end' });
  const order = h('select', { id: 'order' }, h('option', { value: 'newest' }, 'Newest first'), h('option', { value: 'oldest' }, 'Oldest first'));
  const count = h('input', { id: 'count', type: 'number', min: 1, max: 500, value: 50 });
  let shown = [];
  const body = h('tbody');
  const draw = () => fill(body, shown.map((r) => recordRow(r, raw.checked)));
  const raw = h('input', { id: 'raw', type: 'checkbox', onchange: () => draw() });
  const bounds = h('p', { class: 'muted', id: 'bounds' });
  const load = async (ev) => {
    if (ev) ev.preventDefault();
    const base = `topics/${seg(topic)}/partitions/${partition.value}`;
    try {
      const o = await get(`${base}/offsets`);
      fill(bounds, `Offsets ${o.beginning_offset} to ${o.end_offset - 1} (${o.end_offset - o.beginning_offset} records held).`);
      const n = Math.max(1, Math.min(500, Number(count.value) || 50));
      const at = from.value === '' ? null : Number(from.value);
      let records;
      if (order.value === 'oldest') {
        records = await readFrom(base, Math.max(o.beginning_offset, at ?? o.beginning_offset), o.end_offset, n);
      } else {
        const last = Math.min(o.end_offset, at === null ? o.end_offset : at + 1);
        const start = Math.max(o.beginning_offset, last - n);
        records = (await readFrom(base, start, last, n)).reverse();
      }
      shown = records;
      draw();
      if (!records.length) body.append(h('tr', {}, h('td', { colspan: 5 }, 'No records there.')));
    } catch (e) { notify(`Reading ${topic} failed: ${e.message}`, 'error'); }
  };
  fill(main, h('p', {}, h('a', { href: '#/topics' }, '← Topics')), h('h1', {}, topic),
    h('form', { class: 'card row', id: 'browse', onsubmit: load },
      h('label', { for: 'partition' }, 'Partition'), partition,
      h('label', { for: 'from-offset' }, 'From offset'), from,
      h('label', { for: 'order' }, 'Order'), order,
      h('label', { for: 'count' }, 'Records'), count,
      h('label', { for: 'raw', title: 'Show records framed by a Schema Registry converter as stored' }, raw, ' Raw bytes'),
      h('button', { type: 'submit', class: 'primary', id: 'load' }, 'Show records')),
    bounds,
    h('section', { class: 'card' }, h('table', { class: 'stack', id: 'records' },
      h('thead', {}, h('tr', {}, ['Offset', 'Timestamp', 'Key', 'Value', 'Headers'].map((c) => h('th', { scope: 'col' }, c)))),
      body)));
  await load();
}

export async function render(main, topic) {
  return topic ? browser(main, topic) : list(main);
}
