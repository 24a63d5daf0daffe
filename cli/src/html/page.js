// Draws a felix sequence diagram from the JSON in #felix-data (see cli/src/html/mod.rs).
// No network, no library: plain DOM and SVG. Rows are windowed around the first violation;
// hovering a row shows every lifeline's state there, a click pins it.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("felix-data").textContent);
  const SVG = "http://www.w3.org/2000/svg";
  const GUTTER = 96, LANE_W = 128, HEADER_H = 58, ROW_H = 22, GAP = 60, TEXT_W = 470, CHAR_W = 6.1;
  const lanesW = data.lanes.length * LANE_W;
  const width = GUTTER + lanesW + GAP + TEXT_W;
  const laneX = (i) => GUTTER + i * LANE_W + LANE_W / 2;

  // Options in the address: #compact (no node bookkeeping), before=N, after=N.
  const options = new Map(location.hash.replace(/^#/, "").split("&").filter((o) => o)
    .map((o) => { const [k, v] = o.split("="); return [k, v === undefined ? "" : v]; }));
  const number = (key, fallback) => {
    const value = Number(options.get(key));
    return options.has(key) && Number.isInteger(value) && value >= 0 ? value : fallback;
  };
  const violating = new Map(data.violations.map((v) => [v.row, v]));
  // The first violation's why: the events it names and what they depend on (marked rows).
  const why = new Set(data.why || []);
  const first = data.violations.length ? data.violations[0] : null;
  let bookkeeping = !options.has("compact");
  // Display rows: every row that is drawn (without node bookkeeping when compact), plus any
  // violating row even if it is a state sample.
  let shown = [], centre = 0;
  function choose() {
    shown = [];
    data.rows.forEach((row, i) => {
      const m = row.mark;
      const quiet = m.shape === "hidden"
        || (!bookkeeping && m.shape === "point" && (m.style === "commit" || m.style === "floor"));
      if (!quiet || violating.has(i) || why.has(i)) shown.push(i);
    });
    centre = first ? Math.max(0, shown.indexOf(first.row)) : 0;
  }
  choose();
  let before = number("before", data.window.before), after = number("after", data.window.after);
  let selected = first ? first.row : (shown.length ? shown[0] : -1);
  let pinned = false;

  function el(name, attrs, parent, text) {
    const node = document.createElementNS(SVG, name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function html(name, attrs, parent, text) {
    const node = document.createElement(name);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    if (parent) parent.appendChild(node);
    return node;
  }
  function fit(text, pixels) {
    const max = Math.max(3, Math.floor(pixels / CHAR_W));
    return text.length <= max ? text : text.slice(0, max - 1) + "\u2026";
  }

  // ---- page skeleton ----
  const header = html("header", {}, document.body);
  html("h1", {}, header, "felix: " + data.title);
  for (const line of data.subtitle) html("p", { class: "sub" }, header, line);
  if (first) {
    const banner = html("p", { class: "banner", id: "violation" }, header);
    html("b", {}, banner, "VIOLATION " + first.invariant);
    banner.appendChild(document.createTextNode(
      " at step " + data.rows[first.row].step + ": " + first.detail));
    if (data.violations.length > 1) {
      banner.appendChild(document.createTextNode(
        " (and " + (data.violations.length - 1) + " more, marked in the diagram)"));
    }
    if ((data.story || []).length) {
      const story = html("ul", { class: "story", id: "story" }, header);
      for (const line of data.story) html("li", {}, story, line);
    }
  } else {
    html("p", { class: "banner ok" }, header, "no violation: every invariant held");
  }
  if (data.omitted) html("p", { class: "sub" }, header, data.omitted);
  const controls = html("div", { class: "controls" }, header);
  const narrow = html("button", { id: "narrow" }, controls, "narrow");
  const widen = html("button", { id: "widen" }, controls, "widen \u00d72");
  const all = html("button", { id: "all" }, controls, "whole run");
  const toggle = html("label", {}, controls);
  const box = html("input", { type: "checkbox", id: "bookkeeping" }, toggle);
  box.checked = bookkeeping;
  toggle.appendChild(document.createTextNode(" node bookkeeping (commits, floors, deletions)"));
  box.onchange = () => { bookkeeping = box.checked; choose(); draw(); };
  const info = html("span", { id: "window-info" }, controls);
  const legend = html("span", { class: "legend" }, controls);
  for (const style of ["request", "reply", "refusal", "peer", "lease", "fault", "commit", "floor"]) {
    html("span", { class: "swatch s-" + style }, legend, style);
  }
  const main = html("div", { class: "main" }, document.body);
  const holder = html("div", { class: "diagram" }, main);
  const panel = html("aside", { id: "state" }, main);

  narrow.onclick = () => { before = data.window.before; after = data.window.after; draw(); };
  widen.onclick = () => { before = Math.max(1, before * 2); after = Math.max(1, after * 2); draw(); };
  all.onclick = () => { before = shown.length; after = shown.length; draw(); };

  // ---- the state panel ----
  function stateAt(lane, row) {
    const changes = data.states[lane] || [];
    let lo = 0, hi = changes.length - 1, found = null;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (changes[mid].row <= row) { found = changes[mid]; lo = mid + 1; } else { hi = mid - 1; }
    }
    return found ? found.lines : ["(nothing yet)"];
  }
  function showState(row) {
    panel.textContent = "";
    if (row < 0) return;
    const r = data.rows[row];
    html("h2", {}, panel, "State after step " + r.step + (r.time ? " (" + r.time + ")" : "")
      + (pinned ? " \u2014 pinned" : ""));
    html("p", { class: "event" }, panel, r.text);
    data.lanes.forEach((lane, i) => {
      const box = html("div", { class: "lane-state k-" + lane.kind, "data-lane": lane.name }, panel);
      html("h3", {}, box, lane.name + " (" + lane.note + ")");
      html("pre", {}, box, stateAt(i, row).join("\n"));
    });
  }

  // ---- the diagram ----
  function draw() {
    holder.textContent = "";
    // Around the first violation; a run where everything held shows its start.
    const start = first ? Math.max(0, centre - before) : 0;
    const end = Math.min(shown.length, first ? centre + after + 1 : before + after + 1);
    info.textContent = "rows " + start + "\u2013" + (end - 1) + " of " + shown.length
      + " drawn rows" + (end > start ? " (steps " + data.rows[shown[start]].step + "\u2013"
      + data.rows[shown[end - 1]].step + ")" : "")
      + (why.size ? "; \u25b8 marks the " + why.size + " events of the why" : "");
    const height = HEADER_H + (end - start) * ROW_H + 16;
    const svg = el("svg", {
      xmlns: SVG, width: width, height: height, viewBox: "0 0 " + width + " " + height,
      id: "diagram", "data-rows": end - start,
    }, holder);
    const defs = el("defs", {}, svg);
    for (const style of ["request", "reply", "refusal", "peer", "lease", "fault", "violation"]) {
      const marker = el("marker", {
        id: "head-" + style, viewBox: "0 0 10 10", refX: 9, refY: 5,
        markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse",
      }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", class: "head s-" + style }, marker);
    }
    // Row backgrounds first, so marks are drawn over them.
    const rowsLayer = el("g", { class: "rows" }, svg);
    const lanesLayer = el("g", { class: "lanes" }, svg);
    const marksLayer = el("g", { class: "marks" }, svg);
    data.lanes.forEach((lane, i) => {
      const g = el("g", { class: "lane k-" + lane.kind, "data-name": lane.name }, lanesLayer);
      const x = laneX(i);
      el("rect", { x: x - LANE_W / 2 + 6, y: 4, width: LANE_W - 12, height: 40, rx: 5, class: "lane-head" }, g);
      el("text", { x: x, y: 21, class: "lane-name" }, g, lane.name);
      el("text", { x: x, y: 36, class: "lane-note" }, g, fit(lane.note, LANE_W - 16));
      el("line", { x1: x, y1: 44, x2: x, y2: height - 4, class: "lifeline" }, g);
    });
    el("text", { x: 8, y: 36, class: "col-head" }, lanesLayer, "step / time");
    el("text", { x: GUTTER + lanesW + GAP, y: 36, class: "col-head" }, lanesLayer, "what happened");
    for (let k = start; k < end; k++) {
      const index = shown[k];
      const row = data.rows[index];
      const y = HEADER_H + (k - start) * ROW_H;
      const mid = y + ROW_H / 2;
      const violation = violating.get(index);
      const bg = el("rect", {
        x: 0, y: y, width: width, height: ROW_H, "data-row": index, "data-step": row.step,
        class: "row" + ((k % 2) ? " odd" : "") + (violation ? " violation" : "")
          + (why.has(index) ? " why" : "")
          + (index === selected ? " selected" : ""),
      }, rowsLayer);
      if (violation) bg.setAttribute("data-invariant", violation.invariant);
      el("title", {}, bg, row.text);
      bg.addEventListener("mouseenter", () => { if (!pinned) { selected = index; mark(); showState(index); } });
      bg.addEventListener("click", () => {
        pinned = !(pinned && selected === index);
        selected = index; mark(); showState(index);
      });
      el("text", { x: 8, y: mid + 4, class: "step" + (why.has(index) ? " why" : "") }, marksLayer,
        (why.has(index) ? "\u25b8 " : "") + String(row.step));
      if (row.time) el("text", { x: GUTTER - 6, y: mid + 4, class: "time" }, marksLayer, row.time);
      drawMark(marksLayer, row.mark, mid, violation);
      const sentence = (violation ? violation.invariant + " \u2014 " : "") + row.text;
      const t = el("text", {
        x: GUTTER + lanesW + GAP, y: mid + 4,
        class: "sentence" + (violation ? " violation-text" : ""),
      }, marksLayer, fit(sentence, TEXT_W - 16));
      el("title", {}, t, sentence);
    }
    mark();
  }

  function mark() {
    for (const node of holder.querySelectorAll("rect.row")) {
      node.classList.toggle("selected", Number(node.getAttribute("data-row")) === selected);
    }
  }

  function drawMark(layer, m, y, violation) {
    const style = violation ? "violation" : m.style;
    if (m.shape === "arrow") {
      const x1 = laneX(m.from), x2 = laneX(m.to);
      const dir = x2 > x1 ? 1 : -1;
      const g = el("g", { class: "arrow s-" + m.style + (violation ? " violation-mark" : "") }, layer);
      el("line", {
        x1: x1 + dir * 3, y1: y + 3, x2: x2 - dir * 4, y2: y + 3,
        class: "s-" + style, "marker-end": "url(#head-" + style + ")",
      }, g);
      const span = Math.abs(x2 - x1) + LANE_W - 24;
      const text = fit(m.label, span), half = text.length * CHAR_W / 2;
      const lo = GUTTER + 4 + half, hi = GUTTER + lanesW + GAP - 8 - half;
      el("text", { x: Math.min(hi, Math.max(lo, (x1 + x2) / 2)), y: y - 1, class: "label s-" + style }, g, text);
      el("title", {}, g, m.label);
    } else if (m.shape === "point") {
      const x = laneX(m.lane);
      const g = el("g", { class: "point s-" + m.style + (violation ? " violation-mark" : "") }, layer);
      if (m.style === "fault") {
        el("path", { d: `M${x - 7},${y - 6} L${x + 7},${y - 6} L${x},${y + 7} z`, class: "sym s-fault" }, g);
      } else if (m.style === "floor") {
        el("path", { d: `M${x},${y - 6} L${x + 6},${y} L${x},${y + 6} L${x - 6},${y} z`, class: "sym s-floor" }, g);
      } else {
        el("circle", { cx: x, cy: y, r: 4.5, class: "sym s-" + style }, g);
      }
      // One mark per row: a label may run over the next lifelines, up to the sentence column.
      const room = Math.min(2.4 * LANE_W, GUTTER + lanesW + GAP - 12 - (x + 10));
      el("text", { x: x + 10, y: y + 4, class: "plabel s-" + style }, g, fit(m.label, room));
      el("title", {}, g, m.label);
    } else if (m.shape === "band") {
      const g = el("g", { class: "band s-" + m.style }, layer);
      el("line", { x1: GUTTER, y1: y, x2: GUTTER + lanesW, y2: y, class: "band-line s-" + m.style }, g);
      el("text", { x: GUTTER + 8, y: y - 2, class: "blabel s-" + m.style }, g, fit(m.label, lanesW - 16));
      el("title", {}, g, m.label);
    }
  }

  draw();
  showState(selected);
  // For tests and people: the first violation's row is in view.
  window.felixDiagram = { lanes: data.lanes.map((l) => l.name), violations: data.violations, shown: shown.length };
})();
