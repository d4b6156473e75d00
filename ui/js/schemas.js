// The embedded Schema Registry's subjects, their versions and schemas, read through the registry's
// read-only routes under /registry on the REST listener.

import { get, seg } from './api.js';
import { h, fill, notify, td } from './dom.js';

const REG = 'registry';

/** The subject's own compatibility level, or the global one (with where it comes from). */
function level(subject, levels) {
  const own = levels.subjects[subject];
  return own ? { level: own, from: 'subject' } : { level: levels.compatibilityLevel, from: 'global' };
}

/** A subject's versions, every one and the live ones (none when the subject is soft-deleted). */
async function versions(subject, live) {
  const all = await get(`${REG}/subjects/${seg(subject)}/versions?deleted=true`);
  const alive = live ? await get(`${REG}/subjects/${seg(subject)}/versions`) : [];
  return { all, live: new Set(alive) };
}

function deletedMark() {
  return h('span', { class: 'state STOPPED', 'data-deleted': 'true' }, 'soft-deleted');
}

async function list(main) {
  const showDeleted = h('input', { id: 'show-deleted', type: 'checkbox' });
  const globalLevel = h('span', { id: 'global-level' }, '…');
  const body = h('tbody');
  const load = async () => {
    try {
      const [all, live, levels] = await Promise.all([
        get(`${REG}/subjects?deleted=true`), get(`${REG}/subjects`), get(`${REG}/levels`)]);
      fill(globalLevel, levels.compatibilityLevel);
      const liveSet = new Set(live);
      const shown = all.filter((s) => showDeleted.checked || liveSet.has(s));
      const rows = await Promise.all(shown.map(async (s) => {
        const v = await versions(s, liveSet.has(s));
        const l = level(s, levels);
        const latest = await get(`${REG}/subjects/${seg(s)}/versions/${v.all[v.all.length - 1]}?deleted=true`);
        const deleted = !liveSet.has(s);
        return h('tr', { 'data-subject': s, 'data-deleted': deleted ? 'true' : null },
          td('Subject', h('span', {}, h('a', { href: `#/schemas/${seg(s)}`, class: 'name', title: s }, s), deleted ? [' ', deletedMark()] : null)),
          td('Versions', v.all.map((n) => (v.live.has(n) ? String(n) : `${n} (deleted)`)).join(', ')),
          td('Latest ID', String(latest.id), 'num'),
          td('Type', latest.schemaType || 'AVRO'),
          td('Compatibility', `${l.level}${l.from === 'global' ? ' (global)' : ''}`));
      }));
      fill(body, rows);
      if (!rows.length) body.append(h('tr', {}, h('td', { colspan: 5 }, 'No subjects yet.')));
    } catch (e) { notify(`Reading the registry failed: ${e.message}`, 'error'); }
  };
  showDeleted.addEventListener('change', load);
  fill(main, h('h1', {}, 'Schemas'),
    h('div', { class: 'card row' },
      h('span', {}, 'Global compatibility: ', globalLevel),
      h('label', { for: 'show-deleted' }, showDeleted, ' Show soft-deleted subjects')),
    h('section', { class: 'card' }, h('table', { class: 'stack', id: 'subjects' },
      h('thead', {}, h('tr', {}, ['Subject', 'Versions', 'Latest ID', 'Type', 'Compatibility'].map((c, i) => h('th', { scope: 'col', class: i === 2 ? 'num' : null }, c)))),
      body)));
  await load();
}

/** A schema's text pretty-printed when it is JSON (Avro, JSON Schema), as it is otherwise (Protobuf). */
function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}

async function subjectPage(main, subject, wanted) {
  fill(main, h('p', {}, h('a', { href: '#/schemas' }, '← Schemas')), h('h1', {}, subject));
  try {
    const [live, levels] = await Promise.all([get(`${REG}/subjects`), get(`${REG}/levels`)]);
    const v = await versions(subject, live.includes(subject));
    const l = level(subject, levels);
    const chosen = wanted ? Number(wanted) : v.all[v.all.length - 1];
    const s = await get(`${REG}/subjects/${seg(subject)}/versions/${chosen}?deleted=true`);
    const refs = s.references || [];
    const nav = h('ul', { class: 'row', id: 'versions', 'aria-label': 'Versions' }, v.all.map((n) => h('li', { 'data-version': n, style: 'list-style: none' },
      h('a', { href: `#/schemas/${seg(subject)}/${n}`, class: 'button', 'aria-current': n === chosen ? 'page' : null }, `Version ${n}`),
      v.live.has(n) ? null : [' ', deletedMark()])));
    fill(main, h('p', {}, h('a', { href: '#/schemas' }, '← Schemas')), h('h1', {}, subject),
      v.live.size ? null : h('p', {}, deletedMark(), ' Every version of this subject is soft-deleted.'),
      h('p', { id: 'level' }, 'Compatibility: ', h('strong', {}, l.level), l.from === 'global' ? ' (the global level)' : ' (set on this subject)'),
      nav,
      h('section', { class: 'card', id: 'version', 'data-version': chosen },
        h('h2', {}, `Version ${chosen}`),
        h('dl', { class: 'try-rec' },
          h('dt', {}, 'Schema ID'), h('dd', { id: 'schema-id' }, String(s.id)),
          h('dt', {}, 'Type'), h('dd', { id: 'schema-type' }, s.schemaType || 'AVRO'),
          h('dt', {}, 'References'), h('dd', { id: 'references' }, refs.length
            ? h('ul', {}, refs.map((r) => h('li', {}, `${r.name} → `, h('a', { href: `#/schemas/${seg(r.subject)}/${r.version}` }, `${r.subject} version ${r.version}`))))
            : 'none')),
        h('pre', { class: 'trace', id: 'schema-text' }, pretty(s.schema))));
  } catch (e) { notify(`Reading subject ${subject} failed: ${e.message}`, 'error'); }
}

export async function render(main, subject, version) {
  return subject ? subjectPage(main, subject, version) : list(main);
}
