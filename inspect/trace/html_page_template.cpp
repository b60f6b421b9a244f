// The page of the html view: markup, style and script, inline, with no network access. The
// data arrives as JSON in <script id="trace-data"> (view_html.cpp replaces @DATA@).
//
// What it draws: the fabric grid (an SVG rect per PE, class "pe"; a short bar per link with
// traffic, class "link", coloured by load), a cycle slider over the recording (one position
// per bucket of cycles, the last position is the whole run), the hang's wait-for graph as red
// arrows and as text, and on a click on a PE its task timeline and instruction trace.
#include <string_view>

namespace wsemu::trace {

std::string_view html_page_template() {
  return R"HTML(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>@TITLE@</title>
<style>
body { font: 13px/1.4 system-ui, sans-serif; margin: 0; color: #222; background: #fafafa; }
header { background: #1d2433; color: #eee; padding: 8px 14px; }
header b { color: #fff; }
#main { display: flex; flex-wrap: wrap; gap: 14px; padding: 12px; align-items: flex-start; }
#left { flex: 0 0 auto; }
#right { flex: 1 1 360px; max-width: 720px; }
#controls { margin-bottom: 8px; }
#slider { width: 420px; vertical-align: middle; }
svg#fabric { background: #fff; border: 1px solid #ccc; }
rect.pe { stroke: #99a; stroke-width: 1; cursor: pointer; }
rect.pe.selected { stroke: #000; stroke-width: 3; }
rect.pe.blocked { stroke: #d00; stroke-width: 3; }
line.link { stroke-linecap: round; pointer-events: none; }
line.wait { stroke: #d00; stroke-width: 3; pointer-events: none; }
text.coord { font-size: 9px; fill: #667; pointer-events: none; }
.panel { background: #fff; border: 1px solid #ccc; padding: 8px 10px; margin-bottom: 12px; }
.panel h2 { font-size: 14px; margin: 0 0 6px 0; }
pre { margin: 0; white-space: pre-wrap; font: 12px/1.35 ui-monospace, monospace; }
table.insns { border-collapse: collapse; font: 12px ui-monospace, monospace; }
table.insns td { padding: 0 8px 0 0; }
table.insns tr.now { background: #ffe9a8; }
#insn-box { max-height: 420px; overflow: auto; }
.legend span { display: inline-block; width: 14px; height: 10px; margin-right: 2px; vertical-align: middle; }
.muted { color: #777; }
</style>
</head>
<body>
<header id="title"></header>
<div id="main">
  <div id="left">
    <div id="controls">
      <label for="slider">cycles</label>
      <input type="range" id="slider" min="0" value="0">
      <span id="window"></span>
    </div>
    <svg id="fabric" xmlns="http://www.w3.org/2000/svg"></svg>
    <div class="legend" id="legend"></div>
  </div>
  <div id="right">
    <div class="panel" id="hang-panel" style="display:none"><h2>Hang: wait-for graph</h2><pre id="hang-text"></pre></div>
    <div class="panel" id="fault-panel" style="display:none"><h2>Fault</h2><pre id="fault-text"></pre></div>
    <div class="panel" id="pe-panel"><h2 id="pe-title">Click a PE</h2><div id="pe-body" class="muted">Its task timeline and instruction trace show here.</div></div>
  </div>
</div>
<script type="application/json" id="trace-data">@DATA@</script>
<script>
"use strict";
const D = JSON.parse(document.getElementById('trace-data').textContent);
const NS = 'http://www.w3.org/2000/svg';
const [VX, VY, VW, VH] = D.view;
const CELL = Math.max(14, Math.min(96, Math.floor(640 / Math.max(VW, VH))));
const PAD = 4;
const DIRS = ['N', 'E', 'S', 'W', 'RAMP'];

function el(tag, attrs, parent, ns) {
  const e = ns === false ? document.createElement(tag) : document.createElementNS(NS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (parent) parent.appendChild(e);
  return e;
}
function html(tag, text, parent, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  if (parent) parent.appendChild(e);
  return e;
}
function heat(u) {  // 0: dark blue .. 1: red, as in the PNG heatmap
  const stops = [[20, 24, 90], [30, 90, 220], [40, 200, 220], [240, 220, 40], [220, 30, 30]];
  u = Math.max(0, Math.min(1, u));
  const at = u * 4, i = Math.min(3, Math.floor(at)), f = at - i;
  const c = stops[i].map((v, k) => Math.round(v + (stops[i + 1][k] - v) * f));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

document.getElementById('title').innerHTML = '';
html('b', 'wsemu trace', document.getElementById('title'));
html('span', `  ${D.file} \u2014 ${D.arch} ${D.width}\u00d7${D.height}, ${D.clock_mhz} MHz \u2014 cycles ${D.first}..${D.end} \u2014 ${D.status}` +
     (D.view[2] < D.width || D.view[3] < D.height ? ` \u2014 showing PEs (${VX},${VY}) to (${VX + VW - 1},${VY + VH - 1})` : ''),
     document.getElementById('title'));

// ---- the grid ----
const svg = document.getElementById('fabric');
svg.setAttribute('width', VW * CELL + 2 * PAD);
svg.setAttribute('height', VH * CELL + 2 * PAD);
const gPes = el('g', {id: 'pes'}, svg), gLinks = el('g', {id: 'links'}, svg), gWaits = el('g', {id: 'waits'}, svg);
const defs = el('defs', {}, svg);
const marker = el('marker', {id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 6, markerHeight: 6, orient: 'auto'}, defs);
el('path', {d: 'M 0 0 L 10 5 L 0 10 z', fill: '#d00'}, marker);

const peInfo = new Map();
for (const p of D.pes) peInfo.set(p.x + ',' + p.y, p);
const peRects = new Map();
function cx(x) { return PAD + (x - VX) * CELL + CELL / 2; }
function cy(y) { return PAD + (y - VY) * CELL + CELL / 2; }
for (let y = VY; y < VY + VH; ++y) {
  for (let x = VX; x < VX + VW; ++x) {
    const info = peInfo.get(x + ',' + y);
    const r = el('rect', {class: 'pe', x: PAD + (x - VX) * CELL + 2, y: PAD + (y - VY) * CELL + 2, width: CELL - 4, height: CELL - 4,
                          fill: info && info.program >= 0 ? '#e3e8f4' : '#f3f3f3', 'data-x': x, 'data-y': y}, gPes);
    const t = el('title', {}, r);
    t.textContent = `P${x}.${y}` + (info && info.program >= 0 ? ` \u2014 ${D.programs[info.program].name}` : ' (no program)');
    r.addEventListener('click', () => showPe(x, y));
    peRects.set(x + ',' + y, r);
    if (CELL >= 28) el('text', {class: 'coord', x: PAD + (x - VX) * CELL + 4, y: PAD + (y - VY) * CELL + 11}, gPes).textContent = `${x},${y}`;
  }
}
// A link is a bar from the PE toward its neighbour, set off to one side so that the two
// directions between a pair of PEs do not overlap; RAMP deliveries are a dot in the PE.
const linkEls = [];
for (const l of D.links) {
  const x0 = cx(l.x), y0 = cy(l.y), h = CELL / 2, o = CELL / 6;
  let a;
  switch (l.dir) {
    case 0: a = [x0 - o, y0 - 2, x0 - o, y0 - h - 2]; break;
    case 1: a = [x0 + 2, y0 - o, x0 + h + 2, y0 - o]; break;
    case 2: a = [x0 + o, y0 + 2, x0 + o, y0 + h + 2]; break;
    case 3: a = [x0 - 2, y0 + o, x0 - h - 2, y0 + o]; break;
    default: a = null;
  }
  const e = a ? el('line', {class: 'link', x1: a[0], y1: a[1], x2: a[2], y2: a[3], 'stroke-width': Math.max(2, CELL / 8)}, gLinks)
              : el('circle', {class: 'link ramp', cx: x0, cy: y0, r: Math.max(2, CELL / 7)}, gLinks);
  const buckets = new Map(l.buckets.map(b => [b[0], b[1]]));
  linkEls.push({l, e, buckets});
}
function bucketCycles(k) {
  if (k >= D.buckets) return D.end - D.first;
  return Math.min(D.bucket_cycles, D.end - (D.first + k * D.bucket_cycles));
}
function showLoads(k) {
  const all = k >= D.buckets;
  const cycles = Math.max(1, bucketCycles(k));
  for (const {l, e, buckets} of linkEls) {
    const n = all ? l.total : (buckets.get(k) || 0);
    const color = n ? heat(n / cycles) : 'rgba(0,0,0,0)';
    e.setAttribute(e.tagName === 'circle' ? 'fill' : 'stroke', color);
    let t = e.querySelector('title');
    if (!t) t = el('title', {}, e);
    t.textContent = `P${l.x}.${l.y} ${DIRS[l.dir]}: ${n} wavelets in ${cycles} cycles`;
  }
  for (const p of D.pes) {
    const r = peRects.get(p.x + ',' + p.y);
    if (!r || p.program < 0) continue;
    let insns = 0, stalls = 0;
    for (const a of (p.activity || [])) if (all || a[0] === k) { insns += a[1]; stalls += a[2]; }
    const busy = Math.min(1, insns / cycles), stalled = Math.min(1, stalls / cycles);
    const g = Math.round(232 - 120 * busy), red = Math.round(227 + 28 * stalled);
    r.setAttribute('fill', stalled > busy ? `rgb(${red},${Math.round(200 - 80 * stalled)},150)` : `rgb(${Math.round(227 - 90 * busy)},${g + 12},${Math.round(244 - 120 * busy)})`);
  }
  const a = all ? D.first : D.first + k * D.bucket_cycles;
  const b = all ? D.end : a + bucketCycles(k);
  document.getElementById('window').textContent = all ? `all ${D.first}..${D.end}` : `${a}..${b}`;
  current = [a, b];
  if (selected) highlightInsns();
}
let current = [D.first, D.end], selected = null;
const slider = document.getElementById('slider');
slider.max = D.buckets;
slider.value = D.buckets;
slider.addEventListener('input', () => showLoads(Number(slider.value)));

const legend = document.getElementById('legend');
legend.appendChild(document.createTextNode('link load: '));
for (let i = 0; i <= 10; ++i) { const s = html('span', '', legend); s.style.background = heat(i / 10); }
legend.appendChild(document.createTextNode(' 0% .. 100% of the cycles; PE fill: pale = idle, darker grey = busier (instructions per cycle), pink to red = stalled more than busy'));

// ---- the hang ----
if (D.hang) {
  document.getElementById('hang-panel').style.display = '';
  document.getElementById('hang-text').textContent = D.hang_text;
  for (const n of D.hang.nodes) {
    const r = peRects.get(n.x + ',' + n.y);
    if (r && n.blocked) r.classList.add('blocked');
  }
  for (const e of D.hang.edges) {
    const [fx, fy] = e.from, [tx, ty] = e.to;
    const x1 = cx(fx), y1 = cy(fy), x2 = cx(tx), y2 = cy(ty);
    const len = Math.hypot(x2 - x1, y2 - y1) || 1, shrink = CELL / 4;
    // Offset sideways so that A->B and B->A stay apart.
    const ox = -(y2 - y1) / len * CELL / 5, oy = (x2 - x1) / len * CELL / 5;
    const line = el('line', {class: 'wait', x1: x1 + (x2 - x1) / len * shrink + ox, y1: y1 + (y2 - y1) / len * shrink + oy,
                             x2: x2 - (x2 - x1) / len * shrink + ox, y2: y2 - (y2 - y1) / len * shrink + oy,
                             'marker-end': 'url(#arrow)', 'data-color': e.color}, gWaits);
    el('title', {}, line).textContent = `P${fx}.${fy} waits for P${tx}.${ty} on color ${e.color}: ${e.why}`;
  }
}
if (D.fault) {
  document.getElementById('fault-panel').style.display = '';
  document.getElementById('fault-text').textContent = D.fault;
}

// ---- one PE ----
function taskName(p, id) {
  const prog = p.program >= 0 ? D.programs[p.program] : null;
  const n = prog && prog.tasks[String(id)];
  return n ? `${id} ${n}` : String(id);
}
function showPe(x, y) {
  if (selected) { const r = peRects.get(selected.x + ',' + selected.y); if (r) r.classList.remove('selected'); }
  const p = peInfo.get(x + ',' + y) || {x, y, program: -1};
  selected = p;
  peRects.get(x + ',' + y).classList.add('selected');
  const prog = p.program >= 0 ? D.programs[p.program] : null;
  document.getElementById('pe-title').textContent = `P${x}.${y}` + (prog ? ` \u2014 ${prog.name}` : ' (no program)');
  const body = document.getElementById('pe-body');
  body.className = '';
  body.innerHTML = '';
  if (D.hang) for (const n of D.hang.nodes) if (n.x === x && n.y === y) {
    html('pre', `hang: ${n.state}${n.task >= 0 ? ' in task ' + taskName(p, n.task) : ''}\n` + n.waits.join('\n'), body);
  }
  // Task timeline: a bar per task run, stalls below in red.
  const W = 560, span = Math.max(1, D.end - D.first), X = c => 40 + (c - D.first) / span * W;
  html('div', 'task timeline', body, 'muted');
  const tl = el('svg', {id: 'timeline', width: W + 50, height: 64}, body);
  el('line', {x1: 40, y1: 44, x2: 40 + W, y2: 44, stroke: '#999'}, tl);
  el('text', {x: 40, y: 60, 'font-size': 10}, tl).textContent = D.first;
  el('text', {x: 40 + W - 30, y: 60, 'font-size': 10}, tl).textContent = D.end;
  const palette = ['#4e79a7', '#f28e2b', '#59a14f', '#b07aa1', '#76b7b2', '#edc948', '#9c755f', '#bab0ac'];
  for (const [a, b, id] of (p.tasks || [])) {
    const r = el('rect', {class: 'task', x: X(a), y: 8, width: Math.max(1, X(b) - X(a)), height: 18, fill: palette[id % palette.length]}, tl);
    el('title', {}, r).textContent = `task ${taskName(p, id)}: cycles ${a}..${b}`;
  }
  for (const [a, b, why] of (p.stalls || [])) {
    const r = el('rect', {class: 'stall', x: X(a), y: 30, width: Math.max(1, X(b) - X(a)), height: 8, fill: '#d33'}, tl);
    el('title', {}, r).textContent = `stall (${why}): cycles ${a}..${b}`;
  }
  if (!(p.tasks || []).length) html('div', 'no task ran on this PE in the recording', body, 'muted');
  // Instruction trace.
  const insns = p.insns || [];
  html('div', `instruction trace (${insns.length}${p.dropped ? ', ' + p.dropped + ' more not kept' : ''})`, body, 'muted');
  const box = html('div', undefined, body);
  box.id = 'insn-box';
  const table = html('table', undefined, box, 'insns');
  for (const [cycle, pc, task] of insns) {
    const tr = html('tr', undefined, table);
    tr.dataset.cycle = cycle;
    html('td', '@' + cycle, tr);
    html('td', task >= 0 ? 't' + task : '', tr);
    html('td', 'pc ' + pc, tr);
    html('td', prog && prog.instructions[pc] !== undefined ? prog.instructions[pc] : '?', tr);
  }
  highlightInsns();
}
function highlightInsns() {
  let first = null;
  for (const tr of document.querySelectorAll('table.insns tr')) {
    const c = Number(tr.dataset.cycle), now = c >= current[0] && c < current[1] && current[1] - current[0] < D.end - D.first;
    tr.classList.toggle('now', now);
    if (now && !first) first = tr;
  }
  if (first) first.scrollIntoView({block: 'nearest'});
}

showLoads(D.buckets);
document.body.dataset.rendered = `${VW}x${VH}`;
</script>
</body>
</html>
)HTML";
}

}  // namespace wsemu::trace
