// Small DOM helpers shared by the pages.

/** Builds an element: h('a', {href: '#/'}, 'text', child…). `on*` attributes become listeners. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'disabled' || k === 'selected') el[k] = Boolean(v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

const ICONS = { RUNNING: '▶', PAUSED: '⏸', STOPPED: '■', FAILED: '✖', UNASSIGNED: '…', RESTARTING: '↻' };

/** A state as an icon and a word, coloured as well. */
export function stateBadge(state) {
  const s = String(state || 'UNKNOWN').toUpperCase();
  return h('span', { class: `state ${s}`, 'data-state': s }, h('span', { 'aria-hidden': 'true' }, `${ICONS[s] || '?'} `), s);
}

/** Shows a message at the top of the page: `kind` is 'ok' or 'error'. */
export function notify(text, kind = 'ok') {
  const box = document.getElementById('notice');
  const msg = h('div', { class: `msg-${kind}`, role: kind === 'error' ? 'alert' : null, 'data-kind': kind, 'data-at': Date.now() }, text,
    ' ', h('button', { type: 'button', 'aria-label': 'Dismiss', onclick: () => msg.remove() }, '×'));
  box.replaceChildren(msg);
  if (kind === 'ok') setTimeout(() => msg.remove(), 8000);
}

/** Asks for confirmation in a modal dialog; resolves to true when confirmed. */
export function ask(title, body, okLabel = 'OK') {
  const dialog = document.getElementById('dialog');
  fill(document.getElementById('dialog-title'), title);
  fill(document.getElementById('dialog-body'), body);
  document.getElementById('dialog-ok').textContent = okLabel;
  dialog.returnValue = '';
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
  });
}

export function fmtNumber(v, digits = 1) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  if (Math.abs(v) >= 100 || Number.isInteger(v)) return Math.round(v).toLocaleString('en');
  return v.toFixed(digits);
}

export function fmtBytes(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return '–';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return `${i ? v.toFixed(1) : v} ${units[i]}`;
}

export function fmtDuration(seconds) {
  if (!Number.isFinite(seconds)) return '–';
  const d = Math.floor(seconds / 86400), hr = Math.floor(seconds % 86400 / 3600);
  const m = Math.floor(seconds % 3600 / 60), s = Math.floor(seconds % 60);
  return [d && `${d}d`, (d || hr) && `${hr}h`, `${m}m`, `${s}s`].filter(Boolean).join(' ');
}

/** A labelled table cell, so that narrow screens can show the column name next to the value. */
export function td(label, content, cls) {
  return h('td', { 'data-label': label, class: cls }, content);
}

/** Runs `fn` every `ms` while the tab is visible, and once now; returns the stop function. */
export function every(ms, fn) {
  let stopped = false;
  let timer = null;
  let running = false;
  const tick = async () => {
    timer = null;
    if (stopped || running) return;
    running = true;
    if (!document.hidden) {
      try { await fn(); } catch (e) { console.warn(e); }
    }
    running = false;
    if (!stopped && !document.hidden && !timer) timer = setTimeout(tick, ms);
  };
  const onVisible = () => { if (!document.hidden && !timer && !running && !stopped) tick(); };
  document.addEventListener('visibilitychange', onVisible);
  tick();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    document.removeEventListener('visibilitychange', onVisible);
  };
}

/** Delays calls to `fn` until `ms` passed without another. */
export function debounce(fn, ms) {
  let t = null;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

/** Takes away a message shown more than a moment ago (on moving to another page). */
export function clearOldNotice() {
  const msg = document.querySelector('#notice > div');
  if (msg && Date.now() - Number(msg.dataset.at) > 1500) msg.remove();
}
