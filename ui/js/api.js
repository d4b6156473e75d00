// Talks to the worker's public REST API with URLs relative to the console, so the console works behind
// any host or path prefix.

const BASE = new URL('../', document.baseURI);

/** An answer the API refused: its HTTP status and Kafka's error `message`. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export function url(path) {
  return new URL(path.replace(/^\//, ''), BASE).toString();
}

/** One request; resolves to the parsed JSON answer (or null), rejects with an ApiError. */
export async function api(method, path, body, headers = {}) {
  const init = { method, headers: { Accept: 'application/json', ...headers } };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers['Content-Type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch(url(path), init);
  } catch (e) {
    throw new ApiError(0, `The worker did not answer: ${e.message}`);
  }
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = text; }
  }
  if (!res.ok) {
    const message = data && data.message ? data.message : `HTTP ${res.status}`;
    throw new ApiError(res.status, message);
  }
  return data;
}

export const get = (path, headers) => api('GET', path, undefined, headers);

/** A connector name as one path segment. */
export const seg = encodeURIComponent;

/** Parses Prometheus text into samples {name, labels, value}. */
export function parseMetrics(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      for (const l of m[3].matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
        labels[l[1]] = l[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      }
    }
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

/** `GET /metrics`, parsed. */
export async function metrics() {
  const res = await fetch(url('metrics'), { headers: { Accept: 'text/plain' } });
  if (!res.ok) throw new ApiError(res.status, `GET /metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}

/** Sums the samples named `name` whose labels include `match`. */
export function sum(samples, name, match = {}) {
  let total = 0;
  let seen = false;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (Object.entries(match).some(([k, v]) => s.labels[k] !== v)) continue;
    if (Number.isFinite(s.value)) { total += s.value; seen = true; }
  }
  return seen ? total : null;
}

/** The largest sample named `name` whose labels include `match`. */
export function max(samples, name, match = {}) {
  let best = null;
  for (const s of samples) {
    if (s.name !== name || !Number.isFinite(s.value)) continue;
    if (Object.entries(match).some(([k, v]) => s.labels[k] !== v)) continue;
    best = best === null ? s.value : Math.max(best, s.value);
  }
  return best;
}

/** A connector's throughput and lag from the metrics. */
export function connectorRates(samples, connector) {
  const m = { connector };
  const source = sum(samples, 'kafka_connect_source_task_source_record_poll_rate', m);
  const written = sum(samples, 'kafka_connect_source_task_source_record_write_rate', m);
  const read = sum(samples, 'kafka_connect_sink_task_sink_record_read_rate', m);
  const sent = sum(samples, 'kafka_connect_sink_task_sink_record_send_rate', m);
  return {
    in: source ?? read,
    out: written ?? sent,
    lag: sum(samples, 'liteconnect_sink_lag_records', m),
  };
}
