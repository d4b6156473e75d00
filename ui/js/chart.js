// Small line charts as inline SVG, for values the page samples itself.

import { h, fmtNumber } from './dom.js';

const NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs) {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  return el;
}

/** A chart of `points` ([time ms, value]) over the last `windowMs`, with its latest value as text. */
export function chart(title, points, windowMs, unit = '') {
  const w = 300, hgt = 80, now = Date.now();
  const shown = points.filter(([t, v]) => t >= now - windowMs && Number.isFinite(v));
  const peak = shown.length ? Math.max(...shown.map(([, v]) => v)) : null;
  const top = Math.max(1, peak ?? 0);
  // Until the page has sampled a whole window, the samples it has fill the width.
  const start = shown.length ? Math.max(now - windowMs, shown[0][0]) : now - windowMs;
  const span = Math.max(10000, now - start);
  const xy = shown.map(([t, v]) => `${((t - start) / span * w).toFixed(1)},${(hgt - 4 - v / top * (hgt - 8)).toFixed(1)}`);
  const latest = shown.length ? shown[shown.length - 1][1] : null;
  const graphic = svg('svg', { viewBox: `0 0 ${w} ${hgt}`, preserveAspectRatio: 'none', role: 'img',
    'aria-label': `${title}: latest ${fmtNumber(latest)}${unit}, peak ${fmtNumber(peak)}${unit}` });
  graphic.append(svg('line', { x1: 0, y1: hgt - 4, x2: w, y2: hgt - 4, stroke: '#c9ced6' }));
  if (xy.length > 1) {
    graphic.append(svg('polyline', { points: xy.join(' '), fill: 'none', stroke: '#0b5cad', 'stroke-width': 2,
      'vector-effect': 'non-scaling-stroke' }));
  }
  return h('figure', { class: 'chart', 'data-chart': title },
    graphic,
    h('figcaption', {}, h('strong', {}, title), ` ${fmtNumber(latest)}${unit} (peak ${fmtNumber(peak)}${unit}, over up to ${Math.round(windowMs / 60000)} min)`));
}
