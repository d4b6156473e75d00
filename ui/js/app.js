// The console's router: hash routes (#/connectors/x) so the server only serves static files.

import { h, fill, clearOldNotice } from './dom.js';
import * as connectors from './connectors.js';
import * as connector from './connector.js';
import * as create from './create.js';
import * as topics from './topics.js';
import * as schemas from './schemas.js';
import * as worker from './worker.js';

const ROUTES = [
  [/^#?\/?$/, connectors, 'connectors'],
  [/^#\/connectors\/?$/, connectors, 'connectors'],
  [/^#\/connectors\/(.+)$/, connector, 'connectors'],
  [/^#\/new$/, create, 'new'],
  [/^#\/topics\/?$/, topics, 'topics'],
  [/^#\/topics\/(.+)$/, topics, 'topics'],
  [/^#\/schemas\/?$/, schemas, 'schemas'],
  [/^#\/schemas\/([^/]+)(?:\/(\d+))?$/, schemas, 'schemas'],
  [/^#\/worker$/, worker, 'worker'],
];

let cleanup = null;
// Each render draws into its own view; one overtaken by a newer render (a page still loading when
// the route changed) is left detached, and its refresh loop stopped, so it never shows.
let generation = 0;

async function render() {
  if (cleanup) { cleanup(); cleanup = null; }
  const mine = ++generation;
  const main = document.getElementById('main');
  const hash = location.hash || '#/connectors';
  const route = ROUTES.find(([re]) => re.test(hash));
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (route && a.dataset.nav === route[2]) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!route) {
    fill(main, h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '#/connectors' }, 'Back to the connectors')));
    return;
  }
  const params = (route[0].exec(hash) || []).slice(1).map((p) => (p === undefined ? undefined : decodeURIComponent(p)));
  const view = h('div', { class: 'view' });
  fill(main, view);
  const page = route[1];
  const result = await page.render(view, ...params);
  const stop = typeof result === 'function' ? result : null;
  if (mine !== generation) {
    if (stop) stop();
    return;
  }
  cleanup = stop;
  document.title = `${main.querySelector('h1')?.textContent || 'Console'} · liteconnect`;
}

let focusMain = false;
window.addEventListener('hashchange', () => { focusMain = true; clearOldNotice(); render().then(() => {
  if (focusMain) document.getElementById('main').focus();
}); });
render();
