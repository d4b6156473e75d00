// A new connector: a form built from the plugin's config definition, validated as you type, or a
// pasted JSON body.

import { api, get, seg } from './api.js';
import { h, fill, notify, debounce } from './dom.js';
import { tryPanel } from './tryit.js';
import { specForm } from './airbyte.js';

const STATES = ['RUNNING', 'PAUSED', 'STOPPED'];
/** Keys shown outside "More settings" whatever their group. */
const CORE = new Set(['name', 'tasks.max', 'topics', 'topics.regex']);
/** The groups every connector has (Kafka's own); a plugin's keys in them go under "More settings". */
const COMMON = new Set(['Common', 'Transforms', 'Predicates', 'Error Handling', 'Topic Creation',
  'Exactly Once Support', 'offsets.topic', 'Offsets Topic']);

/** The input for one key: a choice when the API names the values, else text (or a password). */
function input(def, recommended) {
  const common = { name: def.name, id: `f-${def.name}`, 'aria-describedby': `doc-${def.name} err-${def.name}` };
  const choices = def.type === 'BOOLEAN' && !recommended.length ? ['true', 'false'] : recommended;
  if (choices.length) {
    const dflt = def.default_value === null || def.default_value === undefined ? 'none' : def.default_value;
    return h('select', common, h('option', { value: '' }, `(default: ${dflt})`), choices.map((v) => h('option', { value: v }, v)));
  }
  const dflt = def.default_value;
  // A password's default is never shown by the API ("[hidden]", also for an empty one): no placeholder.
  const shown = def.type !== 'PASSWORD' && dflt !== null && dflt !== undefined && dflt !== '';
  return h('input', { ...common, type: def.type === 'PASSWORD' ? 'password' : 'text', autocomplete: 'off',
    placeholder: shown ? `default: ${dflt}` : null });
}

function field(def, recommended) {
  const required = def.required;
  return h('div', { class: 'field', 'data-field': def.name },
    h('label', { for: `f-${def.name}` }, def.display_name || def.name, ' ', h('code', {}, def.name !== def.display_name ? `(${def.name})` : ''),
      required ? h('span', { class: 'req', title: 'required' }, ' * required') : ''),
    input(def, recommended),
    h('p', { class: 'err', id: `err-${def.name}` }),
    def.documentation ? h('p', { class: 'doc', id: `doc-${def.name}` }, def.documentation) : h('span', { id: `doc-${def.name}` }));
}

/** The form's fields by group, from the plugin's definition and a first validation. */
function buildFields(form, own, validated) {
  const ownNames = new Set(own.map((d) => d.name));
  const groups = new Map();
  const extra = new Map();
  for (const c of validated.configs) {
    const def = c.definition;
    if (def.name === 'connector.class' || !c.value.visible) continue;
    const important = CORE.has(def.name) || def.required || (ownNames.has(def.name) && !COMMON.has(def.group));
    const target = important ? groups : extra;
    const g = def.group || 'Connector';
    if (!target.has(g)) target.set(g, []);
    target.get(g).push({ required: !!def.required, el: field(def, c.value.recommended_values || []) });
  }
  // Required keys first in each group, the others in the definition's order.
  const ordered = (fields) => [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)].map((f) => f.el);
  const sets = (m) => [...m].map(([g, fields]) => h('fieldset', {}, h('legend', {}, g), ordered(fields)));
  fill(form, sets(groups), extra.size ? h('details', {}, h('summary', {}, 'More settings'), sets(extra)) : null);
}

function collect(form, plugin) {
  const config = { 'connector.class': plugin };
  for (const el of form.querySelectorAll('input[name], select[name]')) {
    if (el.value !== '') config[el.name] = el.value;
  }
  return config;
}

/** Shows each key's errors on its field; `all` shows them on untouched fields too. Returns the count. */
function showErrors(form, answer, all) {
  let count = 0;
  for (const c of answer.configs) {
    const name = c.value.name;
    const box = form.querySelector(`[data-field="${CSS.escape(name)}"]`);
    if (!box) continue;
    const el = box.querySelector('[name]');
    const errors = c.value.errors;
    count += errors.length;
    const shown = errors.length && (all || el.dataset.touched);
    box.classList.toggle('invalid', Boolean(shown));
    el.setAttribute('aria-invalid', shown ? 'true' : 'false');
    box.querySelector('.err').textContent = shown ? errors.join(' ') : '';
  }
  return count;
}

function parseOffsets(text) {
  if (!text.trim()) return undefined;
  const parsed = JSON.parse(text);
  return Array.isArray(parsed) ? parsed : parsed.offsets;
}

async function createWith(body) {
  try {
    await api('POST', 'connectors', body);
    notify(`Created ${body.name}${body.initial_state ? ` (${body.initial_state})` : ''}.`);
    location.hash = `#/connectors/${seg(body.name)}`;
  } catch (e) {
    notify(`Creating ${body.name || 'the connector'} failed: ${e.message}`, 'error');
  }
}

/** A plugin as the list shows it: its simple name, and its package too where two simple names collide. */
export function pluginLabel(p, plugins) {
  const simple = p.class.split('.').pop();
  const twins = plugins.filter((o) => o.class.split('.').pop() === simple).length;
  const pkg = p.class.slice(0, Math.max(0, p.class.length - simple.length - 1));
  return twins > 1 ? `${simple} (${p.type}, ${p.version}, ${pkg})` : `${simple} (${p.type}, ${p.version})`;
}

function formMode(plugins) {
  const select = h('select', { id: 'plugin', name: 'plugin-class' }, h('option', { value: '' }, 'Choose a plugin…'),
    plugins.map((p) => h('option', { value: p.class, title: p.class }, pluginLabel(p, plugins))));
  const form = h('div', { id: 'fields' });
  const stateBox = h('fieldset', { id: 'initial-state' }, h('legend', {}, 'Initial state (KIP-980)'),
    STATES.map((s) => h('label', { class: 'inline' }, h('input', { type: 'radio', name: 'initial_state', value: s, checked: s === 'RUNNING' }), ` ${s} `)));
  const offsets = h('textarea', { id: 'create-offsets', rows: 4, spellcheck: 'false', placeholder: '[{"partition": {…}, "offset": {…}}]' });
  const status = h('p', { id: 'validation', 'aria-live': 'polite', class: 'muted' });
  let plugin = '';
  // Once creating was tried, every field shows its errors, typed in or not.
  let attempted = false;
  const validate = async (all) => {
    attempted = attempted || all;
    const answer = await api('PUT', `connector-plugins/${seg(plugin)}/config/validate`, collect(form, plugin));
    const count = showErrors(form, answer, attempted);
    status.textContent = count ? `${count} error(s) to fix.` : 'The config is valid.';
    return count;
  };
  const later = debounce(() => validate(false).catch((e) => { status.textContent = e.message; }), 400);
  form.addEventListener('input', (ev) => { if (ev.target.name) { ev.target.dataset.touched = '1'; later(); } });
  form.addEventListener('change', (ev) => { if (ev.target.name) { ev.target.dataset.touched = '1'; later(); } });
  select.addEventListener('change', async () => {
    plugin = select.value;
    attempted = false;
    fill(form);
    if (!plugin) return;
    const [own, validated] = await Promise.all([
      get(`connector-plugins/${seg(plugin)}/config`),
      api('PUT', `connector-plugins/${seg(plugin)}/config/validate`, { 'connector.class': plugin }),
    ]);
    buildFields(form, own, validated);
    specForm(form, plugin);
    trial.sync();
  });
  const submit = async (ev) => {
    ev.preventDefault();
    if (!plugin) { notify('Choose a plugin first.', 'error'); select.focus(); return; }
    if (await validate(true)) {
      notify('The config has errors: nothing was created.', 'error');
      form.querySelector('[aria-invalid="true"]')?.focus();
      return;
    }
    const config = collect(form, plugin);
    let offs;
    try { offs = parseOffsets(offsets.value); } catch (e) { notify(`The offsets are not valid JSON: ${e.message}`, 'error'); return; }
    const body = { name: config.name, config, initial_state: stateBox.querySelector('input:checked').value };
    if (offs) body.offsets = offs;
    await createWith(body);
  };
  const trial = tryPanel(() => {
    if (!plugin) throw new Error('Choose a plugin first.');
    return { plugin, config: collect(form, plugin) };
  });
  return [h('form', { id: 'create-form', onsubmit: submit, novalidate: true },
    h('div', { class: 'field' }, h('label', { for: 'plugin' }, 'Plugin'), select),
    form, stateBox,
    h('div', { class: 'field' }, h('label', { for: 'create-offsets' }, 'Starting offsets (optional, JSON)'), offsets),
    status,
    h('button', { type: 'submit', class: 'primary', id: 'create' }, 'Create connector')), trial.el];
}

/** The config of a pasted body: a `POST /connectors` body's config (with its name), or a flat config. */
function jsonConfig(text) {
  let parsed;
  try { parsed = JSON.parse(text); } catch (e) { throw new Error(`The request body is not valid JSON: ${e.message}`); }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('The request body must be a JSON object.');
  const config = parsed.config && typeof parsed.config === 'object' ? { ...parsed.config } : { ...parsed };
  if (parsed.config && parsed.name !== undefined && config.name === undefined) config.name = parsed.name;
  const plugin = config['connector.class'];
  if (!plugin) throw new Error('The config names no connector.class.');
  return { plugin, config };
}

function jsonMode() {
  const area = h('textarea', { id: 'create-json', rows: 14, spellcheck: 'false',
    placeholder: '{"name": "…", "config": {…}, "initial_state": "STOPPED"}  or  {"name": "…", "connector.class": "…", …}' });
  const submit = async (ev) => {
    ev.preventDefault();
    let parsed;
    try { parsed = JSON.parse(area.value); } catch (e) { notify(`Not valid JSON: ${e.message}`, 'error'); return; }
    // A POST /connectors body, or a flat config with its name inside.
    const body = parsed.config && typeof parsed.config === 'object' ? parsed : { name: parsed.name, config: parsed };
    await createWith(body);
  };
  const trial = tryPanel(() => jsonConfig(area.value));
  area.addEventListener('change', () => trial.sync());
  return [h('form', { id: 'json-form', onsubmit: submit },
    h('div', { class: 'field' }, h('label', { for: 'create-json' }, 'Request body: {"name", "config", "initial_state", "offsets"}, or a flat config with "name"'), area),
    h('button', { type: 'submit', class: 'primary' }, 'Create from JSON')), trial.el];
}

export async function render(main) {
  const plugins = await get('connector-plugins');
  const box = h('div');
  const mode = (which) => () => {
    fill(box, which === 'form' ? formMode(plugins) : jsonMode());
    for (const b of tabs.querySelectorAll('button')) b.setAttribute('aria-pressed', String(b.dataset.mode === which));
  };
  const tabs = h('div', { class: 'row', role: 'group', 'aria-label': 'How to describe the connector' },
    h('button', { type: 'button', 'data-mode': 'form', onclick: mode('form') }, 'Form'),
    h('button', { type: 'button', 'data-mode': 'json', onclick: mode('json') }, 'Paste JSON'));
  fill(main, h('h1', {}, 'New connector'), tabs, h('section', { class: 'card' }, box));
  mode('form')();
}
