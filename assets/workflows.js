// Workflows in the console: the graph drawn as SVG in layers, the editor (nodes from the group's
// jobs, edges, the API's problems beside their fields as the user edits), a run's page (graph
// coloured by node state, a timeline bar per node, actions, followed while open) and the trigger
// dialog. Uses api, showErrors, localTimes and safeNext from console.js. Whatever a user typed
// (keys, names, messages, outputs) is inserted as text, never as markup.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
/// Run states after which nothing changes: the run page stops polling.
const OPEN_RUN = new Set(["QUEUED", "RUNNING"]);
/// Run states the API retries from their failed and cancelled nodes.
const RETRYABLE = new Set(["FAILED", "CANCELLED", "TIMED_OUT"]);

function pageTexts(el) {
  try { return JSON.parse(el.dataset.texts || "{}"); } catch (e) { return {}; }
}

// An element with attributes (`text` sets its text) and children.
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") el.textContent = String(v);
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  el.append(...children.filter((c) => c !== null && c !== undefined));
  return el;
}

// The same for SVG.
function s(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") el.textContent = String(v);
    else el.setAttribute(k, String(v));
  }
  el.append(...children.filter((c) => c !== null && c !== undefined));
  return el;
}

// `text` cut to `max` characters, with an ellipsis when cut.
function fit(text, max) {
  const chars = Array.from(String(text || ""));
  return chars.length > max ? chars.slice(0, max - 1).join("") + "…" : chars.join("");
}

// ---------------------------------------------------------------------------------------------
// Layout: topological layers (each node's parents in earlier layers, keys sorted in a layer, as
// the server's), then each layer ordered by the mean row of its parents so edges cross little.

// Layers of the graph: each node one layer after its last parent. A cycle (a graph being
// edited) is broken at the node with the fewest parents left, so that it is still drawn in
// layers and its closing edge shows as one going back.
function computeLayers(nodes, edges) {
  const keys = [...new Set(nodes.map((n) => n.key))].sort();
  const known = new Set(keys);
  const parents = new Map(keys.map((k) => [k, new Set()]));
  for (const e of edges) {
    if (known.has(e.from) && known.has(e.to) && e.from !== e.to) parents.get(e.to).add(e.from);
  }
  const layerOf = new Map();
  const layers = [];
  while (layerOf.size < keys.length) {
    const left = keys.filter((k) => !layerOf.has(k));
    const unplaced = (k) => [...parents.get(k)].filter((p) => !layerOf.has(p)).length;
    let ready = left.filter((k) => unplaced(k) === 0);
    if (!ready.length) ready = [left.reduce((best, k) => (unplaced(k) < unplaced(best) ? k : best))];
    for (const k of ready) layerOf.set(k, layers.length);
    layers.push(ready);
  }
  return layers;
}

// The server's layers when they hold exactly the graph's keys (else they are stale).
function usableLayers(layers, nodes) {
  if (!Array.isArray(layers)) return null;
  const flat = layers.flat();
  const keys = new Set(nodes.map((n) => n.key));
  return flat.length === keys.size && flat.every((k) => keys.has(k)) ? layers : null;
}

// key → {col, row}.
function place(layers, edges) {
  const rows = new Map();
  const at = new Map();
  layers.forEach((column, col) => {
    const weight = (key) => {
      const placed = edges.filter((e) => e.to === key && rows.has(e.from)).map((e) => rows.get(e.from));
      return placed.length ? placed.reduce((a, b) => a + b, 0) / placed.length : Infinity;
    };
    const ordered = column.map((k) => [weight(k), k])
      .sort((a, b) => (a[0] - b[0]) || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
      .map((p) => p[1]);
    ordered.forEach((key, row) => { rows.set(key, row); at.set(key, { col, row }); });
  });
  return at;
}

/// A mark beside a node's key, so that its state does not rest on colour alone.
const STATE_MARK = { WAITING: "…", RUNNING: "▶", SUCCEEDED: "✓", FAILED: "✗", SKIPPED: "↷", CANCELLED: "■" };

// Draws `graph` ({nodes, edges, layers?, states?, captions?, label}) into `box` as an SVG: left to
// right, or top to bottom when the box is too narrow for the columns side by side.
function drawGraph(box, graph) {
  const nodes = graph.nodes.filter((n, i, all) => all.findIndex((m) => m.key === n.key) === i);
  if (!nodes.length) {
    box.replaceChildren(h("p", { class: "wf-empty", text: box.dataset.empty || graph.empty || "" }));
    return;
  }
  const layers = usableLayers(graph.layers, nodes) || computeLayers(nodes, graph.edges);
  const at = place(layers, graph.edges);
  const deepest = Math.max(...layers.map((l) => l.length));
  const across = { w: 168, h: 48, gapMain: 72, gapCross: 28 };
  const wideWidth = 32 + layers.length * across.w + (layers.length - 1) * across.gapMain;
  const room = box.clientWidth - 8;
  const vertical = room > 0 && wideWidth > room && deepest < layers.length + 1;
  // a phone's width: nodes narrow down to fit side by side rather than scroll
  const fitW = Math.floor((room - 32 - (deepest - 1) * 20) / deepest);
  const size = vertical ? { w: Math.max(110, Math.min(150, fitW)), h: 48, gapMain: 44, gapCross: 20 } : across;
  const loops = graph.edges.some((e) => e.from === e.to && at.has(e.from));
  const back = (e) => e.from !== e.to && at.has(e.from) && at.has(e.to) && at.get(e.to).col <= at.get(e.from).col;
  const dip = graph.edges.some(back) ? 40 : 0;
  const margin = 16;
  const main = (i) => margin + i * ((vertical ? size.h : size.w) + size.gapMain);
  const cross = (i) => margin + i * ((vertical ? size.w : size.h) + size.gapCross);
  const spanMain = layers.length * (vertical ? size.h : size.w) + (layers.length - 1) * size.gapMain;
  const spanCross = deepest * (vertical ? size.w : size.h) + (deepest - 1) * size.gapCross;
  const width = 2 * margin + (vertical ? spanCross : spanMain) + (loops ? 44 : 0) + (vertical ? dip : 0);
  const height = 2 * margin + (vertical ? spanMain : spanCross) + (vertical ? 0 : dip);
  const origin = (key) => {
    const p = at.get(key);
    if (!p) return null;
    return vertical ? { x: cross(p.row), y: main(p.col) } : { x: main(p.col), y: cross(p.row) };
  };
  const id = box.id || "wf";
  const defs = s("defs", {});
  for (const when of ["SUCCESS", "FAILURE", "ALWAYS", "TRUE", "FALSE", "BACK"]) {
    defs.append(s("marker", { id: id + "-arrow-" + when, viewBox: "0 0 8 8", refX: 8, refY: 4,
      markerWidth: 8, markerHeight: 8, orient: "auto" },
    s("path", { d: "M0,0 L8,4 L0,8 z", class: "wf-arrow", "data-when": when })));
  }
  const svg = s("svg", { class: "wf-svg", viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-labelledby": id + "-title", "data-orientation": vertical ? "vertical" : "horizontal" },
  s("title", { id: id + "-title", text: graph.label || "" }), defs);
  for (const e of graph.edges) {
    const a = origin(e.from), b = origin(e.to);
    if (!a || !b) continue;
    const when = ["SUCCESS", "FAILURE", "ALWAYS", "TRUE", "FALSE"].includes(e.when) ? e.when : "SUCCESS";
    let d, lx, ly;
    const goingBack = back(e);
    if (goingBack && vertical) {
      // an edge closing a cycle runs back up beside all the nodes, crossing none
      const sx = a.x + size.w, sy = a.y + size.h / 2, tx = b.x + size.w, ty = b.y + size.h / 2;
      const out = margin + spanCross + dip / 2, r = 8;
      d = `M${sx},${sy} H${out - r} Q${out},${sy} ${out},${sy - r} V${ty + r} Q${out},${ty} ${out - r},${ty} H${tx}`;
      lx = out - 8; ly = (sy + ty) / 2;
    } else if (goingBack) {
      // an edge closing a cycle runs back below all the nodes, crossing none
      const sx = a.x + size.w / 2, sy = a.y + size.h, tx = b.x + size.w / 2, ty = b.y + size.h;
      const low = margin + spanCross + dip / 2, r = 8;
      d = `M${sx},${sy} V${low - r} Q${sx},${low} ${sx - r},${low} H${tx + r} Q${tx},${low} ${tx},${low - r} V${ty}`;
      lx = (sx + tx) / 2; ly = low - 8;
    } else if (e.from === e.to) {
      // an edge back to its own node (refused on save) is drawn as a loop so the user sees it
      const x = a.x + size.w, y = a.y;
      d = `M${x},${y + 12} C${x + 40},${y - 14} ${x + 40},${y + size.h + 14} ${x},${y + size.h - 12}`;
      lx = x + 30; ly = y + size.h / 2 + 4;
    } else if (vertical) {
      const sx = a.x + size.w / 2, sy = a.y + size.h, tx = b.x + size.w / 2, ty = b.y;
      const bend = Math.max(Math.abs(ty - sy) / 2, 20);
      d = `M${sx},${sy} C${sx},${sy + bend} ${tx},${ty - bend} ${tx},${ty}`;
      lx = (sx + tx) / 2; ly = (sy + ty) / 2 + 4;
    } else {
      const sx = a.x + size.w, sy = a.y + size.h / 2, tx = b.x, ty = b.y + size.h / 2;
      const bend = Math.max(Math.abs(tx - sx) / 2, 24);
      d = `M${sx},${sy} C${sx + bend},${sy} ${tx - bend},${ty} ${tx},${ty}`;
      lx = (sx + tx) / 2; ly = (sy + ty) / 2 - 4;
    }
    const g = s("g", { class: "wf-edge", "data-from": e.from, "data-to": e.to, "data-when": when,
      "data-back": goingBack ? "true" : null },
    s("title", { text: `${e.from} → ${e.to} (${when})` }),
    s("path", { d, "marker-end": `url(#${id}-arrow-${goingBack ? "BACK" : when})` }));
    if (when !== "SUCCESS") g.append(s("text", { x: lx, y: ly, "text-anchor": "middle", text: when }));
    svg.append(g);
  }
  const chars = vertical ? Math.floor((size.w - 20) / 6.8) : 22;
  for (const n of nodes) {
    const o = origin(n.key);
    const state = graph.states ? graph.states.get(n.key) || "WAITING" : null;
    const caption = (graph.captions && graph.captions[n.key]) ||
      (n.kind === "DECISION" ? n.expression || "" : n.jobId ? "job " + n.jobId : "");
    const stateText = state ? " · " + ((graph.stateNames && graph.stateNames[state]) || state) : "";
    const g = s("g", { class: "wf-node", "data-key": n.key, "data-kind": n.kind, "data-state": state },
      s("title", { text: `${n.key} (${n.kind}${stateText}): ${caption}` }),
      s("rect", { x: o.x, y: o.y, width: size.w, height: size.h, rx: n.kind === "DECISION" ? 16 : 6 }),
      s("text", { class: "key", x: o.x + 10, y: o.y + 19, text: fit(n.key, state ? chars - 3 : chars) }),
      s("text", { class: "caption", x: o.x + 10, y: o.y + 37, text: fit(n.kind + " · " + caption, chars + 2) }));
    if (state) {
      g.append(s("text", { class: "mark", x: o.x + size.w - 10, y: o.y + 19, "text-anchor": "end",
        "aria-hidden": "true", text: STATE_MARK[state] || "" }));
    }
    svg.append(g);
  }
  box.replaceChildren(svg);
}

// Redraws with `draw` when the window's width changes (the orientation may flip).
function redrawOnResize(draw) {
  let timer = null, width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    clearTimeout(timer);
    timer = setTimeout(draw, 150);
  });
}

// ---------------------------------------------------------------------------------------------
// The editor.

// A node as the editor keeps it: every field present, numbers as typed.
function editorNode(n) {
  return {
    key: n.key || "", kind: n.kind === "DECISION" ? "DECISION" : "JOB",
    jobId: n.jobId === undefined || n.jobId === null ? null : Number(n.jobId),
    params: n.params || "", expression: n.expression || "", join: n.join === "ANY" ? "ANY" : "ALL",
    retries: n.retries === undefined || n.retries === null ? "" : String(n.retries),
    timeoutSecs: n.timeoutSecs === undefined || n.timeoutSecs === null ? "" : String(n.timeoutSecs),
  };
}

// A key for a new node: `base` made of letters, digits, `_` and `-`, unique among `taken`.
function freshKey(base, taken) {
  let key = String(base || "").toLowerCase().replace(/[^a-z0-9_-]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 40);
  if (!key) key = "node";
  if (!taken.has(key)) return key;
  for (let i = 2; ; i++) if (!taken.has(key + "_" + i)) return key + "_" + i;
}

function numberOrNull(text) {
  return String(text).trim() === "" ? null : Number(text);
}

// An <option>.
function option(value, text, selected) {
  return h("option", { value, text, selected: selected ? "selected" : null });
}

// A labelled control with its error slot below it.
function field(label, control, errorFor) {
  return h("div", { class: "wf-field" }, h("label", {}, label, control),
    h("p", { class: "error", "data-error-for": errorFor }));
}

function workflowEditor(form) {
  const T = pageTexts(form);
  const start = JSON.parse(form.dataset.graph || "{}");
  const nodes = (start.nodes || []).map(editorNode);
  const edges = (start.edges || []).map((e) => ({ from: e.from, to: e.to, when: e.when || "SUCCESS" }));
  const box = document.getElementById("wf-graph");
  const nodeList = document.getElementById("wf-nodes");
  const edgeList = document.getElementById("wf-edges");
  const validity = document.getElementById("wf-validity");
  const addJob = document.getElementById("wf-add-job");
  const addKey = document.getElementById("wf-add-key");
  const edgeFrom = document.getElementById("wf-edge-from");
  const edgeTo = document.getElementById("wf-edge-to");
  const edgeWhen = document.getElementById("wf-edge-when");
  const jobsNote = document.getElementById("wf-jobs-note");
  let jobs = [], layers = null, asked = 0, timer = null, dirty = false;

  const jobName = (id) => {
    const job = jobs.find((j) => j.id === id);
    return job ? "#" + job.id + " " + job.jobDesc : null;
  };
  const body = () => {
    const f = form.elements;
    return {
      name: f.name.value, jobGroup: Number(f.jobGroup.value), description: f.description.value,
      scheduleType: f.scheduleType.value, scheduleConf: f.scheduleConf.value, timezone: f.timezone.value,
      misfireStrategy: f.misfireStrategy.value, maxConcurrentRuns: numberOrNull(f.maxConcurrentRuns.value),
      overlapPolicy: f.overlapPolicy.value, queueMax: numberOrNull(f.queueMax.value),
      runTimeoutSecs: numberOrNull(f.runTimeoutSecs.value), alarmEmail: f.alarmEmail.value,
      alarmWebhook: f.alarmWebhook.value,
      nodes: nodes.map((n) => n.kind === "DECISION"
        ? { key: n.key, kind: n.kind, expression: n.expression, join: n.join }
        : { key: n.key, kind: n.kind, jobId: n.jobId === null ? undefined : n.jobId,
          params: n.params === "" ? undefined : n.params, join: n.join,
          retries: numberOrNull(n.retries) === null ? undefined : numberOrNull(n.retries),
          timeoutSecs: numberOrNull(n.timeoutSecs) === null ? undefined : numberOrNull(n.timeoutSecs) }),
      edges: edges.map((e) => ({ from: e.from, to: e.to, when: e.when })),
    };
  };
  const draw = () => {
    const captions = {};
    for (const n of nodes) {
      if (n.kind === "JOB" && n.jobId !== null) captions[n.key] = jobName(n.jobId) || "#" + n.jobId;
    }
    drawGraph(box, { nodes, edges, layers, captions,
      label: `${form.elements.name.value}: ${nodes.length} nodes, ${edges.length} edges` });
  };
  // the API's problems, each beside the field it names; what names no field shown goes below
  const showProblems = (errors) => {
    for (const p of form.querySelectorAll("[data-error-for]")) p.textContent = "";
    for (const el of form.querySelectorAll(".invalid")) { el.classList.remove("invalid"); el.removeAttribute("aria-invalid"); }
    for (const err of errors) {
      const name = err.field || "";
      const slot = form.querySelector(`[data-error-for="${CSS.escape(name)}"]`) ||
        form.querySelector('[data-error-for=""]');
      slot.textContent = slot.textContent ? slot.textContent + "\n" + err.error : err.error;
      const control = name && form.querySelector(`[data-field="${CSS.escape(name)}"]`);
      if (control) { control.classList.add("invalid"); control.setAttribute("aria-invalid", "true"); }
    }
  };
  const validate = async () => {
    const n = ++asked;
    form.dataset.ready = "checking";
    try {
      const res = await api("POST", "/api/v1/workflows/validate", body());
      if (n !== asked) return;
      layers = res.valid ? res.layers : null;
      showProblems(res.errors || []);
      validity.textContent = res.valid ? "✓ " + T.graph_valid : "⚠ " + T.problems + ": " + (res.errors || []).length;
      validity.className = res.valid ? "notice" : "error";
    } catch (err) {
      if (n !== asked) return;
      layers = null;
      showProblems([{ field: err.field || "", error: err.error || "request failed" }]);
      validity.textContent = "";
    } finally {
      if (n === asked) { form.dataset.ready = "ready"; draw(); }
    }
  };
  // every change: drawn at once, checked by the API once the user pauses
  const changed = () => {
    dirty = true;
    // the server's layers were for the graph before this change: computed ones until it answers
    layers = null;
    form.dataset.ready = "checking";
    draw();
    clearTimeout(timer);
    timer = setTimeout(validate, 350);
  };

  const keyOptions = (select, current) => {
    const keys = [...new Set(nodes.map((n) => n.key).filter((k) => k))];
    if (current && !keys.includes(current)) keys.push(current);
    select.replaceChildren(...keys.map((k) => option(k, k, k === current)));
  };
  const jobOptions = (select, current) => {
    const list = [option("", T.choose_job, current === null)];
    for (const j of jobs) list.push(option(String(j.id), "#" + j.id + " " + j.jobDesc, j.id === current));
    if (current !== null && !jobs.some((j) => j.id === current)) {
      list.push(option(String(current), "#" + current + " (" + T.not_in_group + ")", true));
    }
    select.replaceChildren(...list);
  };

  const renderEdges = () => {
    keyOptions(edgeFrom, edgeFrom.value);
    keyOptions(edgeTo, edgeTo.value);
    edgeList.replaceChildren(...edges.map((e, i) => {
      const from = h("select", { "data-field": `edges[${i}].from` });
      const to = h("select", { "data-field": `edges[${i}].to` });
      keyOptions(from, e.from);
      keyOptions(to, e.to);
      const when = h("select", { "data-field": `edges[${i}].when` },
        ...["SUCCESS", "FAILURE", "ALWAYS", "TRUE", "FALSE"].map((w) => option(w, w, w === e.when)));
      from.addEventListener("change", () => { e.from = from.value; changed(); });
      to.addEventListener("change", () => { e.to = to.value; changed(); });
      when.addEventListener("change", () => { e.when = when.value; changed(); });
      const remove = h("button", { type: "button", class: "link danger", "data-remove-edge": i,
        "aria-label": `${T.remove} ${e.from} → ${e.to}`, text: T.remove });
      remove.addEventListener("click", () => { edges.splice(i, 1); renderEdges(); changed(); });
      return h("li", { class: "wf-row wf-edge-row", "data-index": i },
        h("div", { class: "wf-row-grid" },
          field(T.edge_from, from, `edges[${i}].from`), field(T.edge_to, to, `edges[${i}].to`),
          field(T.edge_when, when, `edges[${i}].when`)),
        h("div", { class: "wf-row-foot" }, remove));
    }));
  };

  const renderNodes = () => {
    nodeList.replaceChildren(...nodes.map((n, i) => {
      const at = (f) => `nodes[${i}].${f}`;
      const key = h("input", { value: n.key, maxlength: 64, autocomplete: "off", spellcheck: "false", "data-field": at("key") });
      key.addEventListener("input", () => {
        const old = n.key;
        n.key = key.value.trim();
        // the node's edges follow its new key
        for (const e of edges) { if (e.from === old) e.from = n.key; if (e.to === old) e.to = n.key; }
        renderEdges();
        changed();
      });
      const join = h("select", { "data-field": at("join") }, option("ALL", "ALL", n.join === "ALL"), option("ANY", "ANY", n.join === "ANY"));
      join.addEventListener("change", () => { n.join = join.value; changed(); });
      const remove = h("button", { type: "button", class: "link danger", "aria-label": `${T.remove} ${n.key}`, text: T.remove });
      remove.addEventListener("click", () => {
        nodes.splice(i, 1);
        for (let j = edges.length - 1; j >= 0; j--) if (edges[j].from === n.key || edges[j].to === n.key) edges.splice(j, 1);
        renderNodes(); renderEdges(); changed();
      });
      const head = h("div", { class: "wf-row-head" },
        h("span", { class: "pill kind-" + n.kind.toLowerCase(), text: T["kind_" + n.kind] || n.kind }),
        h("label", { class: "wf-key" }, T.node_key, key), remove);
      const row = h("li", { class: "wf-row", "data-index": i, "data-kind": n.kind }, head,
        h("p", { class: "error", "data-error-for": at("key") }), h("p", { class: "error", "data-error-for": at("kind") }));
      if (n.kind === "DECISION") {
        const expr = h("input", { value: n.expression, spellcheck: "false", placeholder: "context.rows > 0", "data-field": at("expression") });
        expr.addEventListener("input", () => { n.expression = expr.value; changed(); });
        row.append(h("div", { class: "wf-row-grid wide" }, field(T.expression, expr, at("expression")), field(T.join, join, at("join"))));
        return row;
      }
      const job = h("select", { "data-field": at("jobId") });
      jobOptions(job, n.jobId);
      job.addEventListener("change", () => { n.jobId = job.value === "" ? null : Number(job.value); changed(); });
      const number = (name, value, max) => {
        const input = h("input", { type: "number", min: 0, max, value, placeholder: T.optional, "data-field": at(name) });
        input.addEventListener("input", () => { n[name] = input.value; changed(); });
        return input;
      };
      const params = h("input", { value: n.params, spellcheck: "false", placeholder: "${workflow.params}", "data-field": at("params") });
      params.addEventListener("input", () => { n.params = params.value; changed(); });
      row.append(
        h("div", { class: "wf-row-grid wide" }, field(T.job, job, at("jobId")), field(T.join, join, at("join"))),
        h("div", { class: "wf-row-grid" }, field(T.retries_short, number("retries", n.retries, 10), at("retries")),
          field(T.timeout_short, number("timeoutSecs", n.timeoutSecs, 604800), at("timeoutSecs"))),
        field(T.node_params, params, at("params")));
      return row;
    }));
  };

  const loadJobs = async () => {
    const group = form.elements.jobGroup.value;
    try {
      const res = await api("GET", "/api/v1/jobs?jobGroup=" + encodeURIComponent(group) + "&limit=1000");
      if (form.elements.jobGroup.value !== group) return;
      jobs = res.items || [];
      jobsNote.textContent = T.no_group_jobs;
      jobsNote.hidden = jobs.length > 0;
    } catch (err) {
      jobs = [];
      jobsNote.textContent = err.error || "";
      jobsNote.hidden = false;
    }
    jobOptions(addJob, null);
    renderNodes();
    draw();
  };

  const addNode = (kind) => {
    const taken = new Set(nodes.map((n) => n.key));
    const jobId = kind === "JOB" && addJob.value !== "" ? Number(addJob.value) : null;
    const base = addKey.value.trim() ||
      (kind === "DECISION" ? "decide" : jobId !== null ? (jobs.find((j) => j.id === jobId) || {}).jobDesc : "node");
    const key = addKey.value.trim() && !taken.has(addKey.value.trim()) ? addKey.value.trim() : freshKey(base, taken);
    nodes.push(editorNode({ key, kind, jobId }));
    addKey.value = "";
    addJob.value = "";
    renderNodes();
    renderEdges();
    changed();
  };
  document.getElementById("wf-add-job-node").addEventListener("click", () => addNode("JOB"));
  document.getElementById("wf-add-decision").addEventListener("click", () => addNode("DECISION"));
  addKey.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); addNode("JOB"); } });
  document.getElementById("wf-add-edge-button").addEventListener("click", () => {
    if (!edgeFrom.value || !edgeTo.value) return;
    edges.push({ from: edgeFrom.value, to: edgeTo.value, when: edgeWhen.value });
    renderEdges();
    changed();
  });
  for (const el of form.querySelectorAll(".wf-fields [name]")) {
    el.addEventListener("input", changed);
    if (el.tagName === "SELECT") el.addEventListener("change", changed);
  }
  form.elements.jobGroup.addEventListener("change", loadJobs);
  window.addEventListener("beforeunload", (e) => { if (dirty) e.preventDefault(); });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    clearTimeout(timer);
    asked++;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      // not `data-api`: console.js would send such a form's flat fields itself, without the graph
      await api(form.dataset.saveMethod || "POST", form.dataset.save, body());
      dirty = false;
      location.href = safeNext(form.dataset.next);
    } catch (err) {
      const refusal = err.error || "request failed";
      // the refusal names only the first problem: the check shows each one beside its field
      if (err.status === 400) await validate();
      else showProblems([{ field: err.field || "", error: refusal }]);
      const slot = form.querySelector('.wf-save [data-error-for=""]');
      slot.textContent = [slot.textContent, (T.not_saved || "Not saved") + ": " + refusal].filter((t) => t).join("\n");
      const control = err.field && form.querySelector(`[data-field="${CSS.escape(err.field)}"]`);
      if (control) control.focus();
      button.disabled = false;
    }
  });

  renderNodes();
  renderEdges();
  draw();
  redrawOnResize(draw);
  // the page paints first: the group's jobs (up to 1000 options) fill the pickers right after
  requestAnimationFrame(() => setTimeout(loadJobs, 0));
  // a saved workflow is checked at once (its layers drawn, its problems shown); a new one only
  // once the user has changed something
  if (nodes.length) validate();
  else form.dataset.ready = "ready";
}

// ---------------------------------------------------------------------------------------------
// A run's page.

// "850 ms", "3.2 s", "4 min 5 s", "2 h 3 min".
function duration(ms) {
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 1 : 0) + " s";
  const secs = Math.round(ms / 1000);
  if (secs < 3600) return Math.floor(secs / 60) + " min " + (secs % 60) + " s";
  return Math.floor(secs / 3600) + " h " + Math.floor((secs % 3600) / 60) + " min";
}

// A tick step that gives about `most` ticks over `span` ms.
function tickStep(span, most) {
  const steps = [100, 250, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5, 72e5,
    216e5, 432e5, 864e5];
  return steps.find((st) => span / st <= most) || steps[steps.length - 1];
}

// The run's timeline: per node, a bar for the wait (ready → started) and one for the run
// (started → finished, or now while it runs), on one time axis.
function drawGantt(box, run, T) {
  const now = Date.now();
  const open = OPEN_RUN.has(run.state);
  const times = [run.startedAt, run.createTime];
  for (const n of run.nodes) times.push(n.readyAt, n.startedAt, n.finishedAt);
  const known = times.filter((t) => t);
  const t0 = Math.min(...known);
  let t1 = Math.max(...known, run.finishedAt || 0, open ? now : 0);
  if (t1 - t0 < 1000) t1 = t0 + 1000;
  const width = Math.max(box.clientWidth || 600, 300);
  const labelW = width < 520 ? 84 : 140;
  const right = 16, top = 24, rowH = 26;
  const plot = width - labelW - right;
  const x = (t) => labelW + ((t - t0) / (t1 - t0)) * plot;
  const height = top + run.nodes.length * rowH + 8;
  const svg = s("svg", { class: "wf-gantt-svg", viewBox: `0 0 ${width} ${height}`, width, height, role: "img",
    "aria-label": T.gantt_waited + " / " + T.gantt_ran });
  const step = tickStep(t1 - t0, Math.max(2, Math.floor(plot / 90)));
  const axis = s("g", { class: "axis" });
  for (let t = 0; t <= t1 - t0 + 1; t += step) {
    axis.append(s("line", { class: "grid", x1: x(t0 + t), x2: x(t0 + t), y1: top - 6, y2: height - 8 }),
      s("text", { x: x(t0 + t), y: top - 10, text: t === 0 ? "0" : "+" + duration(t),
        // the first and a last label near the edge stay inside the drawing
        "text-anchor": t === 0 ? "start" : x(t0 + t) > width - right - 30 ? "end" : "middle" }));
  }
  svg.append(axis);
  run.nodes.forEach((n, i) => {
    const y = top + i * rowH;
    const row = s("g", { class: "row", "data-key": n.key, "data-state": n.state },
      s("text", { class: "label", x: 0, y: y + rowH / 2 + 4, text: fit(n.key, labelW < 100 ? 10 : 18) }));
    const end = (t) => t || (open ? now : null);
    if (n.readyAt) {
      const until = n.startedAt || n.finishedAt || end(null);
      if (until && until > n.readyAt) {
        row.append(s("rect", { class: "bar waited", x: x(n.readyAt), y: y + 8, width: Math.max(2, x(until) - x(n.readyAt)), height: rowH - 16 },
          s("title", { text: `${n.key}: ${T.gantt_waited} ${duration(until - n.readyAt)}` })));
      }
    }
    if (n.startedAt) {
      const until = n.finishedAt || (n.state === "RUNNING" && open ? now : n.startedAt);
      row.append(s("rect", { class: "bar ran", "data-state": n.state, x: x(n.startedAt), y: y + 4, rx: 3,
        width: Math.max(3, x(until) - x(n.startedAt)), height: rowH - 8 },
      s("title", { text: `${n.key}: ${T.gantt_ran} ${duration(until - n.startedAt)} (${T["state_" + n.state] || n.state})` })));
    }
    svg.append(row);
  });
  box.replaceChildren(svg);
}

// Sets a <time> to `ms` in the browser's zone, or a dash.
function setTime(el, ms, dash) {
  if (ms) { el.dataset.ms = String(ms); localTimes(el.parentNode); } else { delete el.dataset.ms; el.textContent = dash; el.removeAttribute("title"); }
}

const PILL = { SUCCEEDED: "ok", FAILED: "fail", TIMED_OUT: "fail", RUNNING: "run", QUEUED: "run" };

function workflowRun(root) {
  const T = pageTexts(root);
  const captions = JSON.parse(root.dataset.captions || "{}");
  let run = JSON.parse(root.dataset.run);
  let shownNodes = "", timer = null, failures = 0;
  const error = document.getElementById("wf-run-error");
  const graphBox = document.getElementById("wf-run-graph");
  const ganttBox = document.getElementById("wf-gantt");
  const tbody = document.querySelector("#wf-run-nodes tbody");
  const stateNames = {};
  for (const st of ["WAITING", "RUNNING", "SUCCEEDED", "FAILED", "SKIPPED", "CANCELLED"]) stateNames[st] = T["state_" + st] || st;

  const nodeRows = () => run.nodes.map((n) => {
    const job = n.kind === "JOB"
      ? h("td", {}, n.jobId ? h("a", { href: "/jobs/" + n.jobId, text: captions[n.key] || "#" + n.jobId }) : "")
      : h("td", {}, h("code", { text: fit(captions[n.key] || "", 60) }), n.decision === undefined || n.decision === null ? null
        : h("span", { class: "pill", text: T.decision + ": " + String(n.decision).toUpperCase() }));
    const logs = h("td", { class: "logs" }, ...(n.logIds || []).map((id) => h("a", { href: "/runs/" + id, text: "#" + id })));
    const output = h("td", { class: "output" }, n.output === null || n.output === undefined ? T.never
      : h("pre", { class: "json", text: JSON.stringify(n.output, null, 2) }));
    // only what the API accepts: marking a failed node of a running or failed run, and retrying
    // (from the failed and cancelled nodes on) a run that ended badly
    const failed = n.state === "FAILED" || n.state === "CANCELLED";
    const actions = h("td", { class: "actions" },
      n.state === "FAILED" && ["RUNNING", "FAILED"].includes(run.state)
        ? h("button", { type: "button", class: "link", "data-mark-success": n.key, text: T.mark_success }) : null,
      failed && RETRYABLE.has(run.state)
        ? h("button", { type: "button", class: "link", "data-retry-from": n.key, text: T.retry_run }) : null);
    return h("tr", { "data-key": n.key, "data-state": n.state },
      h("td", {}, h("code", { text: n.key })), job,
      h("td", {}, h("span", { class: "pill " + (PILL[n.state] || ""), text: T["state_" + n.state] || n.state })),
      h("td", { text: String(n.attempt || 0) }), logs, h("td", { class: "msg", text: n.message || "" }), output, actions);
  });

  const show = () => {
    const pill = document.getElementById("wf-run-state");
    pill.textContent = T["state_" + run.state] || run.state;
    pill.className = "pill " + (PILL[run.state] || "");
    root.dataset.state = run.state;
    document.getElementById("wf-run-paused").hidden = !(run.paused && OPEN_RUN.has(run.state));
    const dash = T.never || "—";
    setTime(document.getElementById("wf-run-started"), run.startedAt, dash);
    setTime(document.getElementById("wf-run-finished"), run.finishedAt, dash);
    setTime(document.getElementById("wf-run-deadline"), run.deadline, dash);
    document.getElementById("wf-run-deadline-line").hidden = !(run.deadline && OPEN_RUN.has(run.state));
    document.getElementById("wf-run-message").textContent = run.message || "";
    document.getElementById("wf-run-params").textContent = run.params || "";
    document.getElementById("wf-run-context").textContent = JSON.stringify(run.context || {}, null, 2);
    const can = {
      pause: run.state === "RUNNING" && !run.paused,
      resume: run.state === "RUNNING" && run.paused,
      retry: RETRYABLE.has(run.state),
      cancel: OPEN_RUN.has(run.state),
    };
    for (const b of document.querySelectorAll("button[data-run-action]")) b.hidden = !can[b.dataset.runAction];
    const states = new Map(run.nodes.map((n) => [n.key, n.state]));
    const graphNodes = run.nodes.map((n) => ({ key: n.key, kind: n.kind, jobId: n.jobId }));
    drawGraph(graphBox, { nodes: graphNodes, edges: run.edges, states, captions, stateNames,
      label: `run ${run.id}: ` + run.nodes.map((n) => `${n.key} ${stateNames[n.state] || n.state}`).join(", ") });
    drawGantt(ganttBox, run, T);
    const nodesNow = JSON.stringify([run.nodes, run.state]);
    if (nodesNow !== shownNodes) { shownNodes = nodesNow; tbody.replaceChildren(...nodeRows()); }
  };

  const poll = async () => {
    timer = null;
    try {
      run = await api("GET", "/api/v1/workflow-runs/" + run.id);
      failures = 0;
      error.textContent = "";
      show();
    } catch (err) {
      failures += 1;
      error.textContent = err.error || "request failed";
    }
    follow(failures ? Math.min(1500 * (failures + 1), 15000) : 1500);
  };
  const follow = (after) => {
    clearTimeout(timer);
    timer = OPEN_RUN.has(run.state) && failures < 40 ? setTimeout(poll, after) : null;
  };
  const act = async (path, question) => {
    if (question && !confirm(question + "?")) return;
    try {
      run = await api("POST", "/api/v1/workflow-runs/" + run.id + "/" + path);
      error.textContent = "";
      show();
      follow(800);
    } catch (err) {
      error.textContent = err.error || "request failed";
    }
  };
  for (const b of document.querySelectorAll("button[data-run-action]")) {
    b.addEventListener("click", () => act(b.dataset.runAction, b.dataset.confirm));
  }
  tbody.addEventListener("click", (e) => {
    if (e.target.closest("button[data-retry-from]")) { act("retry"); return; }
    const b = e.target.closest("button[data-mark-success]");
    if (b) act("nodes/" + encodeURIComponent(b.dataset.markSuccess) + "/mark-success", T.confirm_mark_success + " " + b.dataset.markSuccess);
  });
  redrawOnResize(show);
  show();
  localTimes(root);
  follow(1000);
}

// ---------------------------------------------------------------------------------------------
// The trigger dialog (workflows list, a workflow's runs): optional params, then the run's page.

function triggerDialog() {
  const dialog = document.getElementById("wf-trigger-dialog");
  const form = document.getElementById("wf-trigger-form");
  if (!dialog) return;
  const T = pageTexts(form);
  for (const b of document.querySelectorAll("button[data-wf-trigger]")) {
    b.addEventListener("click", () => {
      form.reset();
      showErrors(form, null);
      form.querySelector(".notice").hidden = true;
      form.dataset.workflow = b.dataset.wfTrigger;
      document.getElementById("wf-trigger-title").textContent = b.dataset.title;
      dialog.showModal();
    });
  }
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const res = await api("POST", "/api/v1/workflows/" + encodeURIComponent(form.dataset.workflow) + "/trigger",
        { params: form.elements.params.value });
      const href = "/workflow-runs/" + encodeURIComponent(res.runId);
      if (res.state === "RUNNING" || res.state === "QUEUED") { location.href = href; return; }
      // the overlap policy skipped it: say why here rather than open a run that never ran
      const notice = form.querySelector(".notice");
      notice.replaceChildren(T.wf_triggered + " " + res.state + " · " + (res.message || "") + " ",
        h("a", { href, text: T.open_run }));
      notice.hidden = false;
      button.disabled = false;
    } catch (err) {
      showErrors(form, err);
      button.disabled = false;
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const editor = document.getElementById("wf-form");
  if (editor) workflowEditor(editor);
  const run = document.getElementById("wf-run");
  if (run) workflowRun(run);
  triggerDialog();
});
