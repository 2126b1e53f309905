//===- PlanReportHtml.cpp - The memory report as one HTML page ----------===//
//
// The page is static text around the embedded JSON: the script parses the
// JSON in the browser, so this file only escapes it. Everything the page
// needs is inline (no fonts, scripts or images to fetch), and the charts are
// canvases because a real model has thousands of buffers.
//
//===----------------------------------------------------------------------===//

#include "codegen/PlanReportHtml.h"

using namespace cairn;
using namespace cairn::codegen;

namespace {

constexpr const char *kPageHead = R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="Cairn">
<title>Cairn memory report</title>
<style>
:root {
  --fg: #1f2328; --muted: #59636e; --line: #d8dee4; --panel: #fff;
  --bg: #f4f5f7; --accent: #0b5cad; --peak: #c2252d;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--fg);
  font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
        Arial, sans-serif;
}
.page { max-width: 1360px; margin: 0 auto; padding: 20px 24px 40px; }
header.report { margin-bottom: 16px; }
.eyebrow { color: var(--muted); font-size: 12px; letter-spacing: .06em; text-transform: uppercase; }
h1 { font-size: 24px; margin: 2px 0 2px; font-weight: 650; }
h2 { font-size: 17px; margin: 0 0 10px; font-weight: 650; }
h3 { font-size: 15px; margin: 0; font-weight: 600; }
h2 .sub { color: var(--muted); font-size: 13px; font-weight: 400; margin-left: 10px; }
.meta { color: var(--muted); }
.meta b { color: var(--fg); font-weight: 600; }
.device { margin-top: 18px; }
.stats { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr));
         gap: 10px; margin-bottom: 12px; }
.stat { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
        padding: 9px 12px; }
.stat .label { color: var(--muted); font-size: 12px; }
.stat .value { font-size: 20px; font-weight: 650; font-variant-numeric: tabular-nums; }
.stat .note { color: var(--muted); font-size: 12px; font-variant-numeric: tabular-nums; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 8px;
         padding: 12px 14px 10px; margin-bottom: 12px; }
.panel-head { display: flex; align-items: baseline; gap: 12px; flex-wrap: wrap;
              margin-bottom: 6px; }
.panel-head .hint { color: var(--muted); font-size: 12.5px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 2px 0 6px; font-size: 12.5px; }
.legend span { white-space: nowrap; }
.sw { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
      margin-right: 5px; vertical-align: -1px; }
.legend .amount { color: var(--muted); font-variant-numeric: tabular-nums; }
.chart { position: relative; }
.chart canvas { display: block; }
.chart canvas.overlay { position: absolute; left: 0; top: 0; }
table { border-collapse: collapse; width: 100%; font-size: 13px; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid #eceff2;
         white-space: nowrap; }
th { color: var(--muted); font-weight: 600; font-size: 12px; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.name { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
          font-size: 12.5px; max-width: 360px; overflow: hidden; text-overflow: ellipsis; }
td.name .note { color: var(--muted); font-size: 11.5px; }
td.loc { color: var(--muted); max-width: 300px; overflow: hidden; text-overflow: ellipsis; }
tbody tr:hover { background: #f1f6fd; }
.bar { display: inline-block; height: 8px; background: #c9d6e6; border-radius: 2px;
       vertical-align: 0; margin-right: 6px; }
.tooltip { position: fixed; z-index: 10; pointer-events: none; max-width: 440px;
           background: rgba(255, 255, 255, .97); border: 1px solid #b8c0c8; border-radius: 6px;
           box-shadow: 0 4px 14px rgba(0, 0, 0, .14); padding: 8px 10px; font-size: 12.5px; }
.tooltip .title { font-weight: 650; font-family: ui-monospace, Menlo, Consolas, monospace;
                  word-break: break-all; margin-bottom: 3px; }
.tooltip table { font-size: 12.5px; width: auto; }
.tooltip td { border: 0; padding: 1px 10px 1px 0; white-space: normal; }
.tooltip td:first-child { color: var(--muted); white-space: nowrap; }
.errors { background: #fff0f0; border: 1px solid #e5a0a0; color: #8a1414;
          border-radius: 8px; padding: 10px 14px; margin: 16px 24px; white-space: pre-wrap; }
.empty { color: var(--muted); padding: 20px 0; }
.transfers svg { display: block; width: 100%; }
.transfers text { font-size: 12px; fill: var(--fg); }
.transfers .lane { stroke: var(--line); stroke-width: 2; }
.transfers .arrow { stroke: #4e79a7; stroke-width: 1.6; fill: none; }
.transfers .back { stroke: #f28e2b; }
footer { color: var(--muted); font-size: 12px; margin-top: 14px; }
</style>
</head>
<body data-render-status="loading" data-rendered-buffers="0" data-render-errors="">
<script>
// First, so that errors anywhere later (a syntax error in the main script
// included) are recorded on <body> for tests and shown to the reader.
(function () {
  // A failing event handler fails on every mouse move: count repeats.
  var errors = new Map();
  window.cairnReportError = function (message) {
    message = String(message);
    errors.set(message, (errors.get(message) || 0) + 1);
    var lines = [];
    errors.forEach(function (n, m) { lines.push(n > 1 ? m + ' (' + n + ' times)' : m); });
    var body = document.body;
    body.setAttribute('data-render-errors', lines.join('\n'));
    body.setAttribute('data-render-status', 'error');
    var box = document.getElementById('render-errors');
    if (!box) {
      box = document.createElement('div');
      box.id = 'render-errors';
      box.className = 'errors';
      body.insertBefore(box, body.firstChild);
    }
    box.textContent = 'This report could not be drawn:\n' + lines.join('\n');
  };
  window.addEventListener('error', function (e) {
    window.cairnReportError((e.message || 'script error') +
                            (e.lineno ? ' (line ' + e.lineno + ')' : ''));
  });
  window.addEventListener('unhandledrejection', function (e) {
    window.cairnReportError('unhandled rejection: ' + e.reason);
  });
})();
</script>
<div class="page" id="page">
<noscript>This report needs JavaScript to draw its charts.</noscript>
</div>
<div class="tooltip" id="tooltip" hidden></div>
<script type="application/json" id="cairn-report">
)html";

constexpr const char *kPageScript = R"html(
</script>
<script>
'use strict';
(function () {
// Kinds in stacking order, bottom up: persistent state first, so the
// per-step memory rides on top of a flat base.
const KINDS = [
  ['param', '#4e79a7'], ['buffer', '#86bcb6'], ['optimizer', '#a0cbe8'],
  ['input', '#9c755f'], ['output', '#d4a6c8'], ['grad', '#f28e2b'],
  ['saved', '#e15759'], ['activation', '#59a14f'], ['workspace', '#b07aa1'],
  ['temp', '#edc948'],
];
const EXTRA_COLOURS = ['#8cd17d', '#ff9d9a', '#79706e', '#bab0ac', '#499894', '#f1ce63'];
const PERSISTENT = new Set(['param', 'buffer', 'optimizer', 'input', 'output']);
const COLOUR = new Map(KINDS);
const ORDER = new Map(KINDS.map((k, i) => [k[0], i]));
const PEAK = '#c2252d';
const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

function kindColour(kind) {
  if (!COLOUR.has(kind))
    COLOUR.set(kind, EXTRA_COLOURS[(COLOUR.size - KINDS.length) % EXTRA_COLOURS.length]);
  return COLOUR.get(kind);
}
function unitFor(bytes) {
  let u = 0;
  while (u + 1 < UNITS.length && bytes >= Math.pow(1024, u + 1)) ++u;
  return u;
}
function fmtBytes(bytes) {
  if (!isFinite(bytes)) return '–';
  const u = unitFor(Math.abs(bytes));
  if (u === 0) return bytes + ' B';
  const v = bytes / Math.pow(1024, u);
  return v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0) + ' ' + UNITS[u];
}
const fmtInt = (n) => Number(n).toLocaleString('en-US');
const pct = (a, b) => (b > 0 ? (100 * a / b).toFixed(1) + '%' : '–');

function el(tag, props, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === 'class') e.className = v;
    else if (k === 'style') e.style.cssText = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}
const swatch = (kind) => el('span', {class: 'sw', style: 'background:' + kindColour(kind)});

// Numbers the schema requires are checked, with the path in the message;
// optional ones fall back to what the buffers imply.
function number(v, where, fallback) {
  if (v === undefined || v === null) {
    if (fallback !== undefined) return fallback;
    throw new Error(where + ' is missing');
  }
  if (typeof v !== 'number' || !isFinite(v))
    throw new Error(where + ' is not a number: ' + JSON.stringify(v));
  return v;
}
function integer(v, where, fallback) {
  const n = number(v, where, fallback);
  if (!Number.isInteger(n) || n < 0 || n > 1e7)
    throw new Error(where + ' is not an index: ' + n);
  return n;
}
function list(v, where) {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new Error(where + ' is not a list');
  return v;
}
const text = (v) => (v === undefined || v === null ? '' : String(v));

function prepareDevice(d, di) {
  const where = 'devices[' + di + ']';
  if (typeof d !== 'object' || d === null) throw new Error(where + ' is not an object');
  const schedule = [];
  for (const [i, s] of list(d.schedule, where + '.schedule').entries()) {
    const index = integer(s.index, where + '.schedule[' + i + '].index', i);
    schedule[index] = {index, op: text(s.op), kernel: text(s.kernel), step: text(s.step),
                       loc: text(s.loc), layer: text(s.layer)};
  }
  let n = schedule.length;
  const buffers = [];
  for (const [i, b] of list(d.buffers, where + '.buffers').entries()) {
    const at = where + '.buffers[' + i + ']' + (b && b.name ? ' (' + b.name + ')' : '');
    if (typeof b !== 'object' || b === null) throw new Error(at + ' is not an object');
    const kind = text(b.kind) || 'buffer';
    const buf = {name: text(b.name) || '#' + i, kind, bytes: number(b.bytes, at + '.bytes'),
                 offset: number(b.offset, at + '.offset', 0), loc: text(b.loc),
                 inPlaceOf: text(b.in_place_of), persistent: PERSISTENT.has(kind),
                 dtype: text(b.dtype),
                 shape: Array.isArray(b.shape) ? b.shape.map((d) => String(d)).join(' x ') : ''};
    if (buf.bytes < 0 || buf.offset < 0) throw new Error(at + ': negative bytes or offset');
    if (!buf.persistent || (b.start !== undefined && b.end !== undefined)) {
      buf.start = integer(b.start, at + '.start');
      buf.end = integer(b.end, at + '.end');
      if (buf.end < buf.start)
        throw new Error(at + ': end ' + buf.end + ' is before start ' + buf.start);
      n = Math.max(n, buf.end + 1);
    }
    buffers.push(buf);
  }
  n = Math.max(n, 1);
  // Persistent buffers hold their bytes for the whole run.
  for (const b of buffers) if (b.persistent) { b.start = 0; b.end = n - 1; }
  const drawn = buffers.filter((b) => b.bytes > 0);
  const byName = new Map(drawn.map((b) => [b.name, b]));

  // Live bytes per kind, by difference arrays. An in-place result shares
  // its operand's bytes, so it counts only once the operand is dead.
  const rank = (k) => (ORDER.has(k) ? ORDER.get(k) : ORDER.size);
  const kinds = [...new Set(drawn.map((b) => b.kind))]
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const live = new Map(kinds.map((k) => [k, new Float64Array(n + 1)]));
  for (const b of drawn) {
    let from = b.start;
    const base = b.inPlaceOf ? byName.get(b.inPlaceOf) : undefined;
    if (base && base !== b && base.start <= from && base.end >= from) from = base.end + 1;
    if (from > b.end) continue;
    const diff = live.get(b.kind);
    diff[from] += b.bytes;
    diff[b.end + 1] -= b.bytes;
  }
  const total = new Float64Array(n);
  for (const k of kinds) {
    const a = live.get(k);
    for (let i = 0; i < n; ++i) { if (i) a[i] += a[i - 1]; total[i] += a[i]; }
  }
  let computedPeak = 0;
  for (let i = 1; i < n; ++i) if (total[i] > total[computedPeak]) computedPeak = i;
  const peakIndex = number(d.peak_index, where + '.peak_index', computedPeak);
  const top = drawn.reduce((m, b) => Math.max(m, b.offset + b.bytes), 0);
  const sum = (bufs) => bufs.reduce((total, b) => total + b.bytes, 0);

  // Runs of kernels of one step, for the labelled bands.
  const steps = [];
  for (let i = 0; i < n; ++i) {
    const s = schedule[i] ? schedule[i].step : '';
    if (steps.length && steps[steps.length - 1].name === s) steps[steps.length - 1].end = i;
    else steps.push({name: s, start: i, end: i});
  }
  return {
    device: d.device === undefined ? di : d.device,
    n, schedule, buffers, drawn, kinds, live, total, top,
    peakIndex: peakIndex >= 0 && peakIndex < n ? peakIndex : computedPeak,
    arena: number(d.arena_bytes, where + '.arena_bytes', top),
    lowerBound: number(d.lower_bound_bytes, where + '.lower_bound_bytes', total[computedPeak]),
    noReuse: number(d.no_reuse_bytes, where + '.no_reuse_bytes', sum(drawn)),
    persistent: number(d.persistent_bytes, where + '.persistent_bytes',
                       sum(drawn.filter((b) => b.persistent))),
    steps: steps.some((s) => s.name) ? steps : [],
    // Optional extras from the planner, shown when present.
    method: text(d.method), provedOptimal: d.proved_optimal === true,
    seconds: typeof d.planning_seconds === 'number' ? d.planning_seconds : null,
    recompute: d.recompute && typeof d.recompute === 'object' ? {
      kernels: typeof d.recompute.kernels === 'number' ? d.recompute.kernels : 0,
      values: Array.isArray(d.recompute.values) ? d.recompute.values.map(text) : [],
      extraFlops: typeof d.recompute.extra_flops === 'number' ? d.recompute.extra_flops : 0,
      stepFlops: typeof d.recompute.step_flops === 'number' ? d.recompute.step_flops : 0,
      budget: typeof d.recompute.memory_budget_bytes === 'number'
                ? d.recompute.memory_budget_bytes : null,
    } : null,
  };
}

// ---- Canvas helpers ----------------------------------------------------

const MARGIN = {left: 64, right: 16, top: 26, bottom: 40};

function niceStep(range, count) {
  const raw = range / Math.max(count, 1);
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const f = raw / mag;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10) * mag;
}

function setupCanvas(canvas, width, height) {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(width * dpr);
  canvas.height = Math.round(height * dpr);
  canvas.style.width = width + 'px';
  canvas.style.height = height + 'px';
  const ctx = canvas.getContext('2d');
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, width, height);
  return ctx;
}

// The frame both charts share: x = schedule index, y = bytes.
function makeFrame(dev, width, height, yMax) {
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = height - MARGIN.top - MARGIN.bottom;
  const yUnit = unitFor(yMax);
  return {
    width, height, plotW, plotH, yMax, yUnit, left: MARGIN.left, top: MARGIN.top,
    bottom: MARGIN.top + plotH, right: MARGIN.left + plotW,
    x: (i) => MARGIN.left + i * plotW / dev.n,
    y: (bytes) => MARGIN.top + plotH - bytes / yMax * plotH,
    index: (px) => Math.floor((px - MARGIN.left) / plotW * dev.n),
  };
}

function drawStepBands(ctx, dev, f) {
  ctx.save();
  ctx.font = '600 12px system-ui, sans-serif';
  ctx.textBaseline = 'alphabetic';
  dev.steps.forEach((s, i) => {
    const x0 = f.x(s.start), x1 = f.x(s.end + 1);
    if (i % 2 === 1) {
      ctx.fillStyle = '#f3f5f8';
      ctx.fillRect(x0, f.top, x1 - x0, f.plotH);
    }
    if (i > 0) {
      const x = Math.round(x0) + .5;
      ctx.strokeStyle = '#8c959f'; ctx.setLineDash([4, 3]);
      ctx.beginPath(); ctx.moveTo(x, f.top - 18); ctx.lineTo(x, f.bottom); ctx.stroke();
      ctx.setLineDash([]);
    }
    const label = (s.name || '(no step)') + '  #' + s.start +
                  (s.end > s.start ? '–' + s.end : '');
    ctx.fillStyle = '#424a53';
    if (ctx.measureText(label).width < x1 - x0 - 8) ctx.fillText(label, x0 + 6, f.top - 8);
    else if (ctx.measureText(s.name).width < x1 - x0 - 8) ctx.fillText(s.name, x0 + 6, f.top - 8);
  });
  ctx.restore();
}

function drawAxes(ctx, dev, f, yTitle) {
  ctx.save();
  ctx.strokeStyle = '#c4cbd3'; ctx.fillStyle = '#59636e'; ctx.lineWidth = 1;
  ctx.font = '11.5px system-ui, sans-serif';
  // y: gridlines at round values of the unit that fits the maximum.
  const scale = Math.pow(1024, f.yUnit);
  const yStep = niceStep(f.yMax / scale, Math.max(2, Math.floor(f.plotH / 45)));
  ctx.textAlign = 'right'; ctx.textBaseline = 'middle';
  for (let v = 0; v * scale <= f.yMax * 1.0001; v += yStep) {
    const y = Math.round(f.y(v * scale)) + .5;
    ctx.strokeStyle = v === 0 ? '#8c959f' : '#e6e9ed';
    ctx.beginPath(); ctx.moveTo(f.left, y); ctx.lineTo(f.right, y); ctx.stroke();
    ctx.fillText(String(+(v.toFixed(6))), f.left - 6, y);
  }
  // x: kernel indices, ticks centred on the kernel.
  const xStep = Math.max(1, niceStep(dev.n, Math.max(2, Math.floor(f.plotW / 90))));
  ctx.textAlign = 'center'; ctx.textBaseline = 'top'; ctx.strokeStyle = '#8c959f';
  for (let i = 0; i < dev.n; i += xStep) {
    const x = Math.round(f.x(i + .5)) + .5;
    ctx.beginPath(); ctx.moveTo(x, f.bottom); ctx.lineTo(x, f.bottom + 4); ctx.stroke();
    ctx.fillText(String(i), x, f.bottom + 6);
  }
  ctx.font = '12px system-ui, sans-serif'; ctx.fillStyle = '#424a53';
  ctx.fillText('Schedule index (kernels in run order)', f.left + f.plotW / 2, f.bottom + 22);
  ctx.save();
  ctx.translate(14, f.top + f.plotH / 2); ctx.rotate(-Math.PI / 2);
  ctx.textBaseline = 'middle';
  ctx.fillText(yTitle + ' (' + UNITS[f.yUnit] + ')', 0, 0);
  ctx.restore();
  ctx.restore();
}

function hLine(ctx, f, bytes, colour, dash, label, above) {
  const y = Math.round(f.y(bytes)) + .5;
  ctx.save();
  ctx.strokeStyle = colour; ctx.setLineDash(dash); ctx.lineWidth = 1.2;
  ctx.beginPath(); ctx.moveTo(f.left, y); ctx.lineTo(f.right, y); ctx.stroke();
  ctx.font = '11.5px system-ui, sans-serif'; ctx.fillStyle = colour; ctx.textAlign = 'right';
  ctx.textBaseline = above ? 'bottom' : 'top';
  ctx.fillText(label, f.right - 4, above ? y - 2 : y + 3);
  ctx.restore();
}

// One line of text in a box beside x, on the side with more room; parts are
// dropped from the end until it fits.
function labelBox(ctx, f, parts, x, y, colour) {
  ctx.save();
  ctx.font = '600 12px system-ui, sans-serif';
  const right = x < f.left + f.plotW / 2, room = (right ? f.right - x : x - f.left) - 14;
  let label = parts.join('  ·  ');
  while (parts.length > 1 && ctx.measureText(label).width > room)
    label = (parts = parts.slice(0, -1)).join('  ·  ');
  const w = Math.ceil(ctx.measureText(label).width) + 12, h = 20;
  const x0 = Math.round(right ? x + 6 : x - 6 - w);
  ctx.fillStyle = 'rgba(255,255,255,.94)'; ctx.strokeStyle = colour; ctx.lineWidth = 1;
  ctx.fillRect(x0, y, w, h); ctx.strokeRect(x0 + .5, y + .5, w, h);
  ctx.fillStyle = '#1f2328'; ctx.textBaseline = 'middle';
  ctx.fillText(label, x0 + 6, y + h / 2 + 1);
  ctx.restore();
}

// The kernel's kind ("Conv2dGradInput") says more than the op it comes from
// ("cairn.conv2d"); reports may carry either.
function kernelName(dev, i) {
  const s = dev.schedule[i], name = s ? s.kernel || s.op : '';
  return '#' + i + (name ? ' ' + name : '');
}

// ---- Chart 1: live bytes over the schedule, stacked by kind ----------------

function drawTimeline(view) {
  const {dev, timeline: canvas} = view;
  const width = canvas.parentElement.clientWidth, height = 300;
  const ctx = setupCanvas(canvas, width, height);
  const peakBytes = dev.total[dev.peakIndex];
  // Headroom above the arena line keeps the peak label clear of it.
  const f = makeFrame(dev, width, height,
                      Math.max(dev.arena, peakBytes, dev.lowerBound, 1) * 1.22);
  view.timelineFrame = f;
  drawStepBands(ctx, dev, f);
  drawAxes(ctx, dev, f, 'Live memory');
  const base = new Float64Array(dev.n);
  for (const k of dev.kinds) {
    const a = dev.live.get(k);
    ctx.beginPath();
    ctx.moveTo(f.x(0), f.y(base[0]));
    for (let i = 0; i < dev.n; ++i) {
      const y = f.y(base[i] + a[i]);
      ctx.lineTo(f.x(i), y); ctx.lineTo(f.x(i + 1), y);
    }
    for (let i = dev.n - 1; i >= 0; --i) {
      const y = f.y(base[i]);
      ctx.lineTo(f.x(i + 1), y); ctx.lineTo(f.x(i), y);
    }
    ctx.closePath();
    ctx.fillStyle = kindColour(k);
    ctx.fill();
    for (let i = 0; i < dev.n; ++i) base[i] += a[i];
  }
  // Arena and lower bound share one label when their lines nearly touch.
  const close = Math.abs(f.y(dev.arena) - f.y(dev.lowerBound)) < 14;
  const bound = 'lower bound ' + fmtBytes(dev.lowerBound);
  hLine(ctx, f, dev.arena, '#24292f', [6, 4], 'arena ' + fmtBytes(dev.arena) +
        (close && dev.arena !== dev.lowerBound ? '  ·  ' + bound : ''), true);
  if (!close) hLine(ctx, f, dev.lowerBound, '#57606a', [2, 3], bound, false);
  // The peak: a marker on the stack and a label with its kernel and line.
  const px = f.x(dev.peakIndex + .5);
  ctx.save();
  ctx.strokeStyle = PEAK; ctx.lineWidth = 1.5;
  ctx.beginPath(); ctx.moveTo(px, f.top); ctx.lineTo(px, f.bottom); ctx.stroke();
  ctx.fillStyle = PEAK;
  ctx.beginPath(); ctx.arc(px, f.y(peakBytes), 4, 0, 2 * Math.PI); ctx.fill();
  ctx.restore();
  const s = dev.schedule[dev.peakIndex] || {};
  const title = 'Peak ' + fmtBytes(peakBytes) + ' at ' + kernelName(dev, dev.peakIndex);
  labelBox(ctx, f, [title, s.layer, s.loc].filter((x) => x), px, f.top + 4, PEAK);
}

// ---- Chart 2: the arena, buffers as (lifetime x offset) boxes --------------

function drawArena(view) {
  const {dev, arena: canvas} = view;
  const width = canvas.parentElement.clientWidth, height = 440;
  const ctx = setupCanvas(canvas, width, height);
  const f = makeFrame(dev, width, height, Math.max(dev.arena, dev.top, 1));
  view.arenaFrame = f;
  drawStepBands(ctx, dev, f);
  drawAxes(ctx, dev, f, 'Arena offset');
  let count = 0;
  for (const b of dev.drawn) {
    const x0 = f.x(b.start), x1 = f.x(b.end + 1);
    const y0 = f.y(b.offset + b.bytes), y1 = f.y(b.offset);
    ctx.fillStyle = kindColour(b.kind);
    ctx.fillRect(x0, y0, Math.max(x1 - x0, .75), Math.max(y1 - y0, .75));
    // A light edge separates neighbours where the box is big enough to keep its colour.
    if (x1 - x0 > 4 && y1 - y0 > 4) {
      ctx.strokeStyle = 'rgba(255,255,255,.75)'; ctx.lineWidth = 1;
      ctx.strokeRect(x0 + .5, y0 + .5, x1 - x0 - 1, y1 - y0 - 1);
    }
    ++count;
  }
  hLine(ctx, f, dev.arena, '#24292f', [6, 4], '', true);
  return count;
}

// ---- Hover: a shared kernel cursor, and the tooltip ------------------------

const tooltip = document.getElementById('tooltip');

function showTooltip(event, title, rows) {
  tooltip.replaceChildren(el('div', {class: 'title'}, title),
    el('table', {}, ...rows.map(([k, v]) => el('tr', {}, el('td', {}, k), el('td', {}, v)))));
  tooltip.hidden = false;
  const pad = 14, r = tooltip.getBoundingClientRect();
  let x = event.clientX + pad, y = event.clientY + pad;
  if (x + r.width > window.innerWidth - 4) x = event.clientX - pad - r.width;
  if (y + r.height > window.innerHeight - 4) y = event.clientY - pad - r.height;
  tooltip.style.left = Math.max(4, x) + 'px';
  tooltip.style.top = Math.max(4, y) + 'px';
}

function lifetime(dev, b) {
  if (b.persistent) return 'whole run (persistent)';
  const span = b.end - b.start + 1;
  return kernelName(dev, b.start) + (span > 1 ? ' → ' + kernelName(dev, b.end) : '') +
         '  (' + span + ' kernel' + (span > 1 ? 's' : '') + ')';
}

function bufferRows(dev, b) {
  const rows = [
    ['Kind', el('span', {}, swatch(b.kind), b.kind)],
    ...(b.dtype ? [['Type', b.dtype + (b.shape ? ' [' + b.shape + ']' : '')]] : []),
    ['Size', fmtBytes(b.bytes) + '  (' + fmtInt(b.bytes) + ' B, ' + pct(b.bytes, dev.arena) +
             ' of arena)'],
    ['Offset', fmtBytes(b.offset) + '  (' + fmtInt(b.offset) + ' B)'],
    ['Lifetime', lifetime(dev, b)],
  ];
  const s = dev.schedule[b.start];
  if (!b.persistent && s && s.step) rows.push(['Step', s.step]);
  if (b.loc) rows.push(['Model line', b.loc]);
  if (b.inPlaceOf) rows.push(['In place of', b.inPlaceOf]);
  return rows;
}

function drawOverlays(view) {
  const overlays = [[view.timelineOverlay, view.timelineFrame],
                    [view.arenaOverlay, view.arenaFrame]];
  for (const [canvas, f] of overlays) {
    const ctx = setupCanvas(canvas, f.width, f.height);
    if (view.cursor !== null) {
      const x0 = f.x(view.cursor), x1 = f.x(view.cursor + 1), x = Math.round((x0 + x1) / 2) + .5;
      ctx.fillStyle = 'rgba(31,35,40,.10)';
      ctx.fillRect(x0, f.top, Math.max(x1 - x0, 1), f.plotH);
      ctx.strokeStyle = 'rgba(31,35,40,.55)'; ctx.lineWidth = 1;
      ctx.beginPath(); ctx.moveTo(x, f.top); ctx.lineTo(x, f.bottom); ctx.stroke();
    }
    const b = view.highlight;
    if (b && f === view.arenaFrame) {
      const x0 = f.x(b.start), x1 = f.x(b.end + 1);
      const y0 = f.y(b.offset + b.bytes), y1 = f.y(b.offset);
      ctx.lineWidth = 2; ctx.strokeStyle = '#111';
      ctx.strokeRect(x0 - 1, y0 - 1, Math.max(x1 - x0, 1) + 2, Math.max(y1 - y0, 1) + 2);
    }
  }
}

function bufferAt(view, px, py) {
  const f = view.arenaFrame, i = f.index(px);
  if (i < 0 || i >= view.dev.n || py < f.top - 3 || py > f.bottom + 3) return null;
  // Exact hit first; else the nearest box within 3px, so thin buffers can be hovered.
  let best = null, bestDist = 3.5;
  for (const b of view.dev.drawn) {
    if (b.start > i || b.end < i) continue;
    const y0 = f.y(b.offset + b.bytes), y1 = f.y(b.offset);
    const dist = py < y0 ? y0 - py : py > y1 ? py - y1 : 0;
    if (dist < bestDist || (dist === 0 && best && b.bytes < best.bytes)) {
      best = b;
      bestDist = dist;
    }
  }
  return best;
}

function attachHover(view) {
  const {dev} = view;
  const leave = () => {
    tooltip.hidden = true;
    view.cursor = null;
    view.highlight = null;
    drawOverlays(view);
  };
  view.timelineOverlay.addEventListener('mousemove', (e) => {
    const f = view.timelineFrame, i = f.index(e.offsetX);
    if (i < 0 || i >= dev.n || e.offsetY < f.top || e.offsetY > f.bottom) return leave();
    view.cursor = i; view.highlight = null; drawOverlays(view);
    const s = dev.schedule[i];
    const rows = [];
    if (s && s.kernel && s.op && s.kernel !== s.op) rows.push(['Op', s.op]);
    if (s && s.step) rows.push(['Step', s.step]);
    if (s && s.layer) rows.push(['Layer', s.layer]);
    if (s && s.loc) rows.push(['Model line', s.loc]);
    rows.push(['Live', fmtBytes(dev.total[i]) + '  (' + pct(dev.total[i], dev.arena) +
                       ' of arena)']);
    for (const k of [...dev.kinds].reverse()) {
      const v = dev.live.get(k)[i];
      if (v > 0) rows.push([el('span', {}, swatch(k), k), fmtBytes(v)]);
    }
    showTooltip(e, kernelName(dev, i) + (i === dev.peakIndex ? '  (peak)' : ''), rows);
  });
  view.arenaOverlay.addEventListener('mousemove', (e) => {
    const f = view.arenaFrame, i = f.index(e.offsetX);
    if (i < 0 || i >= dev.n) return leave();
    view.cursor = i;
    view.highlight = bufferAt(view, e.offsetX, e.offsetY);
    drawOverlays(view);
    if (view.highlight) showTooltip(e, view.highlight.name, bufferRows(dev, view.highlight));
    else tooltip.hidden = true;
  });
  view.timelineOverlay.addEventListener('mouseleave', leave);
  view.arenaOverlay.addEventListener('mouseleave', leave);
}

// ---- Page ------------------------------------------------------------------

// A model split across devices: one lane per device, and each transfer of a
// step as an arrow from the lane that sends to the lane that receives, in
// the order of their tags (the order every device runs them in).
function transfersOf(d, di) {
  const where = 'devices[' + di + '].transfers';
  return list(d.transfers, where).map((t, i) => ({
    step: text(t.step), kind: text(t.kind), buffer: text(t.buffer),
    peer: integer(t.peer, where + '[' + i + '].peer'),
    tag: integer(t.tag, where + '[' + i + '].tag'),
    bytes: number(t.bytes, where + '[' + i + '].bytes')}));
}
function buildTransfers(report, devices) {
  // SVG's namespace as the HTML parser gives it (the page names no URL).
  const holder = document.createElement('div');
  holder.innerHTML = '<svg></svg>';
  const NS = holder.firstChild.namespaceURI;
  const svg = (tag, props, ...children) => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(props || {})) e.setAttribute(k, v);
    for (const c of children) e.append(c);
    return e;
  };
  const sections = [];
  for (const step of list(report.steps, 'steps').map(text)) {
    const sends = [];
    list(report.devices, 'devices').forEach((d, di) => {
      for (const t of transfersOf(d, di))
        if (t.step === step && t.kind === 'send')
          sends.push(Object.assign({from: devices[di].device}, t));
    });
    if (!sends.length) continue;
    sends.sort((a, b) => a.tag - b.tag);
    const laneGap = 56, left = 90, colWidth = 64, top = 24;
    const width = left + colWidth * (sends.length + 0.5);
    const height = top + laneGap * (devices.length - 1) + 30;
    const laneY = (device) => top + laneGap * devices.findIndex((d) => d.device === device);
    const root = svg('svg', {viewBox: '0 0 ' + width + ' ' + height,
                             style: 'max-width:' + width + 'px'});
    for (const d of devices) {
      root.append(svg('line', {class: 'lane', x1: left - 8, x2: width, y1: laneY(d.device),
                               y2: laneY(d.device)}));
      root.append(svg('text', {x: 4, y: laneY(d.device) + 4}, 'device ' + d.device));
    }
    let total = 0;
    sends.forEach((t, i) => {
      const x = left + colWidth * (i + 0.5), y1 = laneY(t.from), y2 = laneY(t.peer);
      const tip = y2 > y1 ? y2 - 6 : y2 + 6;
      total += t.bytes;
      root.append(svg('path', {class: 'arrow' + (y2 < y1 ? ' back' : ''),
                               d: 'M' + x + ',' + y1 + ' L' + x + ',' + tip + ' M' + (x - 4) +
                                  ',' + (tip - Math.sign(y2 - y1) * 5) + ' L' + x + ',' + tip +
                                  ' L' + (x + 4) + ',' + (tip - Math.sign(y2 - y1) * 5)},
                          svg('title', {}, 'tag ' + t.tag + ': ' + t.buffer + ', ' +
                              fmtBytes(t.bytes) + ', device ' + t.from + ' to device ' +
                              t.peer)));
      root.append(svg('text', {x: x - 10, y: height - 6}, String(t.tag)));
    });
    sections.push(el('div', {class: 'panel transfers'},
      el('div', {class: 'panel-head'}, el('h2', {}, 'Transfers: ' + step),
         el('span', {class: 'hint'}, sends.length + ' values, ' + fmtBytes(total) +
            ' per step, in the order of their tags (below). Blue: to a later device; ' +
            'orange: back. Hover an arrow for the value.')),
      root));
  }
  document.body.setAttribute('data-drawn-transfers', String(
      sections.reduce((n, s) => n + s.querySelectorAll('path.arrow').length, 0)));
  return sections;
}

function stat(label, value, note) {
  return el('div', {class: 'stat'}, el('div', {class: 'label'}, label),
            el('div', {class: 'value'}, value), el('div', {class: 'note'}, note || ' '));
}

function chart(cls) {
  const canvas = el('canvas', {class: cls}), overlay = el('canvas', {class: 'overlay'});
  return [el('div', {class: 'chart'}, canvas, overlay), canvas, overlay];
}

function buildDevice(dev, title) {
  const ratio = dev.lowerBound > 0 ? dev.arena / dev.lowerBound : NaN;
  const nViews = dev.buffers.length - dev.drawn.length;
  const seconds = dev.seconds === null ? '' : dev.seconds.toFixed(dev.seconds < 1 ? 3 : 1);
  const planned = [dev.method && 'planned by ' + dev.method, seconds && 'in ' + seconds + ' s']
                    .filter((x) => x).join(' ');
  const section = el('section', {class: 'device'},
                     el('h2', {}, title, planned ? el('span', {class: 'sub'}, planned) : null));
  section.append(el('div', {class: 'stats'},
    stat('Arena', fmtBytes(dev.arena), fmtInt(dev.arena) + ' B'),
    stat('Lower bound', fmtBytes(dev.lowerBound), 'most bytes live at once'),
    stat('Arena / lower bound', isFinite(ratio) ? ratio.toFixed(3) + '×' : '–',
         !isFinite(ratio) ? '' : dev.arena <= dev.lowerBound ? 'optimal plan'
           : '+' + fmtBytes(dev.arena - dev.lowerBound) + ' above the bound' +
             (dev.provedOptimal ? ', proved optimal' : '')),
    stat('No reuse', fmtBytes(dev.noReuse),
         dev.noReuse > 0 ? 'reuse saves ' + pct(dev.noReuse - dev.arena, dev.noReuse) : ''),
    stat('Persistent', fmtBytes(dev.persistent), pct(dev.persistent, dev.arena) + ' of the arena'),
    stat('Buffers', fmtInt(dev.drawn.length),
         nViews ? '+ ' + fmtInt(nViews) + ' without bytes (views)' : 'all with bytes'),
    stat('Kernels', fmtInt(dev.n), 'peak at ' + kernelName(dev, dev.peakIndex))));
  const rc = dev.recompute;
  if (rc && (rc.kernels > 0 || rc.budget !== null)) {
    section.append(el('div', {class: 'stats'},
      stat('Recomputed', fmtInt(rc.kernels) + ' kernels',
           '+' + (rc.extraFlops / 1e9).toFixed(3) + ' GFLOP, ' +
           '+' + pct(rc.extraFlops, rc.stepFlops) + ' on the training step'),
      rc.budget !== null ? stat('Memory budget', fmtBytes(rc.budget),
                                dev.arena <= rc.budget ? 'the arena fits it' : 'over it') : null));
    if (rc.values.length)
      section.append(el('p', {class: 'hint'}, 'Computed again in the backward: ' +
                        rc.values.join(', ')));
  }

  const atPeak = (k) => dev.live.get(k)[dev.peakIndex];
  const legend = el('div', {class: 'legend'}, ...dev.kinds.map((k) => el('span', {}, swatch(k), k,
    atPeak(k) > 0 ? el('span', {class: 'amount'}, ' ' + fmtBytes(atPeak(k))) : null)));
  const [timelineBox, timeline, timelineOverlay] = chart('timeline');
  const [arenaBox, arena, arenaOverlay] = chart('arena');
  const head = (title, hint) => el('div', {class: 'panel-head'}, el('h3', {}, title),
                                   el('span', {class: 'hint'}, hint));
  section.append(
    el('div', {class: 'panel'},
       head('Memory over the schedule', 'Bytes live at each kernel, stacked by kind ' +
            '(legend: bytes at the peak). Hover for the breakdown.'),
       legend, timelineBox),
    el('div', {class: 'panel'},
       head('Arena layout', 'One box per buffer: x = its lifetime, y = its bytes in the arena. ' +
            'Hover a box for details.'),
       arenaBox));

  // The largest buffers; hovering a row outlines its box in the arena.
  const view = {dev, timeline, timelineOverlay, arena, arenaOverlay, cursor: null,
                highlight: null};
  const largest = [...dev.drawn].sort((a, b) => b.bytes - a.bytes || a.start - b.start)
                                .slice(0, 20);
  const biggest = largest.length ? largest[0].bytes : 1;
  const rows = largest.map((b) => {
    const tr = el('tr', {},
      el('td', {class: 'name', title: b.name}, b.name,
         b.inPlaceOf ? el('div', {class: 'note'}, 'in place of ' + b.inPlaceOf) : null),
      el('td', {}, swatch(b.kind), b.kind),
      el('td', {class: 'num'},
         el('span', {class: 'bar', style: 'width:' + Math.max(2, 60 * b.bytes / biggest) + 'px'}),
         fmtBytes(b.bytes)),
      el('td', {class: 'num'}, pct(b.bytes, dev.arena)),
      el('td', {class: 'num'}, fmtBytes(b.offset)),
      el('td', {}, b.persistent ? 'whole run' : '#' + b.start + ' – #' + b.end +
                                                '  (' + (b.end - b.start + 1) + ')'),
      el('td', {class: 'loc', title: b.loc}, b.loc));
    tr.addEventListener('mouseenter', () => {
      view.highlight = b;
      view.cursor = null;
      drawOverlays(view);
    });
    tr.addEventListener('mouseleave', () => {
      view.highlight = null;
      drawOverlays(view);
    });
    return tr;
  });
  const columns = ['Buffer', 'Kind', 'Size', 'Of arena', 'Offset', 'Lifetime (kernels)',
                   'Model line'];
  section.append(el('div', {class: 'panel'},
    head('Largest buffers', largest.length + ' of ' + fmtInt(dev.drawn.length) +
         ' buffers with bytes; hover a row to find it in the arena.'),
    largest.length ? el('table', {},
      el('thead', {}, el('tr', {}, ...columns.map((h, i) =>
        el('th', {class: [2, 3, 4].includes(i) ? 'num' : ''}, h)))),
      el('tbody', {}, ...rows)) : el('div', {class: 'empty'}, 'No buffers.')));
  attachHover(view);
  return [section, view];
}

function render() {
  const source = document.getElementById('cairn-report').textContent;
  let report;
  try {
    report = JSON.parse(source);
  } catch (e) {
    throw new Error('the embedded report is not valid JSON: ' + e.message);
  }
  if (typeof report !== 'object' || report === null || Array.isArray(report))
    throw new Error('the report is not a JSON object');
  const devices = list(report.devices, 'devices').map(prepareDevice);
  const page = document.getElementById('page');
  const model = text(report.model) || 'model';
  document.title = model + ' — Cairn memory report';
  const meta = [];
  const item = (label, value) => {
    if (value) meta.push(el('span', {}, label, el('b', {}, value)));
  };
  item('', text(report.source));
  item('batch ', report.batch === undefined ? '' : text(report.batch));
  item('steps ', list(report.steps, 'steps').map(text).join(', '));
  item('', devices.length === 1 ? '' : devices.length + ' devices');
  const metaLine = el('div', {class: 'meta'});
  meta.forEach((m, i) => { if (i) metaLine.append('  ·  '); metaLine.append(m); });
  page.replaceChildren(el('header', {class: 'report'},
                          el('div', {class: 'eyebrow'}, 'Cairn memory report'),
                          el('h1', {}, model), metaLine));
  if (!devices.length) page.append(el('div', {class: 'empty'}, 'The report lists no devices.'));
  if (devices.length > 1)
    for (const section of buildTransfers(report, devices)) page.append(section);
  const views = devices.map((dev) => {
    const [section, view] = buildDevice(dev, 'Device ' + dev.device);
    page.append(section);
    return view;
  });
  page.append(el('footer', {}, 'A buffer holds bytes [offset, offset + size) from the kernel ' +
                 'that defines it to its last use, inclusive; parameters, buffers, optimizer ' +
                 'state, inputs and outputs for the whole run. 1 KiB = 1024 B.'));
  const draw = () => views.reduce((count, view) => {
    drawTimeline(view);
    const n = drawArena(view);
    drawOverlays(view);
    return count + n;
  }, 0);
  const count = draw();
  let pending = 0;
  window.addEventListener('resize', () => {
    clearTimeout(pending);
    pending = setTimeout(() => {
      try {
        draw();
      } catch (e) {
        window.cairnReportError(e.message);
      }
    }, 120);
  });
  return count;
}

try {
  const count = render();
  document.body.setAttribute('data-rendered-buffers', String(count));
  if (document.body.getAttribute('data-render-status') === 'loading')
    document.body.setAttribute('data-render-status', 'done');
} catch (e) {
  window.cairnReportError(e && e.message ? e.message : String(e));
}
})();
</script>
</body>
</html>
)html";

} // namespace

void cairn::codegen::writePlanReportHtml(llvm::StringRef reportJson,
                                           llvm::raw_ostream &os) {
  os << kPageHead;
  // Inside a JSON string "\u003c" reads back as '<'; outside one '<' is
  // invalid JSON anyway. With no '<' left, neither "</script" nor "<!--"
  // (which would make the parser look for a nested script) can occur.
  size_t start = 0;
  for (size_t i = 0, e = reportJson.size(); i != e; ++i) {
    if (reportJson[i] != '<')
      continue;
    os << reportJson.slice(start, i) << "\\u003c";
    start = i + 1;
  }
  os << reportJson.substr(start);
  os << kPageScript;
}
