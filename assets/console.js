// The console's behaviour: forms that call the REST API and show its {error, field} answers
// beside the field, times in the browser's zone, the language switch, logout.
"use strict";

function setLang(lang) {
  document.cookie = "jobwheel_lang=" + lang + "; path=/; max-age=31536000; SameSite=Strict";
  location.reload();
}

// Where a form may send the browser once it is done: only a path on this admin, by the rule
// the login page's server side keeps (a single "/" not followed by "/" or "\", no control
// characters, written or percent-encoded); anything else goes to "/".
function safeNext(next) {
  if (typeof next !== "string" || next[0] !== "/" || next[1] === "/" || next[1] === "\\") return "/";
  if (/[\u0000-\u001f\u007f-\u009f]/.test(next)) return "/";
  if (/%(0[0-9a-f]|1[0-9a-f]|7f)/i.test(next) || /^\/%(2f|5c)/i.test(next)) return "/";
  return next;
}

function localTimes(root) {
  for (const el of root.querySelectorAll("time[data-ms]")) {
    const ms = Number(el.dataset.ms);
    if (!ms) continue;
    const d = new Date(ms);
    const pad = (n) => String(n).padStart(2, "0");
    el.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
    el.title = d.toISOString();
  }
}

// Sends `body` as JSON; resolves to the parsed answer, or rejects with {error, field, status}.
async function api(method, url, body) {
  const init = { method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  if (res.status === 401 && !url.endsWith("/auth/login")) {
    location.href = "/login?next=" + encodeURIComponent(location.pathname + location.search);
    throw { error: "not logged in", status: 401 };
  }
  const text = await res.text();
  const data = text ? JSON.parse(text) : null;
  if (!res.ok) throw Object.assign({ status: res.status }, data || { error: res.statusText });
  return data;
}

function formBody(form) {
  const body = {};
  for (const el of form.elements) {
    if (!el.name || el.dataset.skip !== undefined || el.disabled) continue;
    if (el.dataset.skipEmpty !== undefined && el.value === "") continue;
    if (el.type === "checkbox" && el.dataset.group !== undefined) {
      body[el.name] = body[el.name] || [];
      if (el.checked) body[el.name].push(Number(el.value));
      continue;
    }
    if (el.type === "checkbox") { body[el.name] = el.checked; continue; }
    if (el.dataset.type === "number") { body[el.name] = el.value === "" ? null : Number(el.value); continue; }
    if (el.dataset.type === "ids") {
      body[el.name] = el.value.split(",").map((s) => s.trim()).filter((s) => s).map(Number);
      continue;
    }
    if (el.dataset.type === "list") {
      body[el.name] = el.value.split(",").map((s) => s.trim()).filter((s) => s);
      continue;
    }
    if (el.multiple) { body[el.name] = Array.from(el.selectedOptions, (o) => Number(o.value)); continue; }
    body[el.name] = el.value;
  }
  return body;
}

// The text of the label around `form`'s field `name` (its own words, not the input's).
function fieldLabel(form, name) {
  const input = form.elements[name];
  const label = input && input.closest ? input.closest("label") : null;
  if (!label) return (input && input.getAttribute && input.getAttribute("aria-label")) || "";
  for (const node of label.childNodes) {
    if (node.nodeType === Node.TEXT_NODE && node.textContent.trim()) return node.textContent.trim();
  }
  return "";
}

// Every problem of an answer beside its field, the API's field names in the form's own words;
// the first bad field takes the focus.
function showErrors(form, err) {
  for (const p of form.querySelectorAll("[data-error-for]")) p.textContent = "";
  for (const el of form.querySelectorAll(".invalid")) el.classList.remove("invalid");
  if (!err) return;
  const problems = err.errors && err.errors.length ? err.errors : [{ field: err.field || "", error: err.error }];
  let first = null;
  for (const problem of problems) {
    const field = problem.field || "";
    let slot = form.querySelector('[data-error-for="' + CSS.escape(field) + '"]');
    if (!slot) slot = form.querySelector('[data-error-for=""]');
    const label = field && fieldLabel(form, field);
    let text = problem.error || "request failed";
    if (label) text = text.split(field).join(label);
    if (slot) slot.textContent = slot.textContent ? slot.textContent + "\n" + text : text;
    const input = field && form.elements[field];
    if (input && input.classList) {
      input.classList.add("invalid");
      input.setAttribute("aria-invalid", "true");
      if (!first) first = input;
    }
  }
  for (const el of form.querySelectorAll("[aria-invalid]")) {
    if (!el.classList.contains("invalid")) el.removeAttribute("aria-invalid");
  }
  if (first) first.focus();
}

// A new token's secret, shown once; the list below is reloaded behind it.
async function showSecret(answer) {
  document.getElementById("token-value").textContent = answer.token;
  document.getElementById("token-secret").hidden = false;
  const res = await fetch(location.href, { credentials: "same-origin" });
  const page = new DOMParser().parseFromString(await res.text(), "text/html");
  const fresh = page.getElementById("tokens");
  if (fresh) { document.getElementById("tokens").replaceWith(fresh); bindButtons(fresh); localTimes(fresh); }
  document.getElementById("token-form").reset();
}

async function submitApiForm(form) {
  const notice = form.querySelector(".notice");
  if (notice) notice.hidden = true;
  if (form.id === "password-form" &&
      form.elements.newPassword.value !== form.elements.repeat.value) {
    showErrors(form, { field: "repeat", error: form.dataset.differ });
    return;
  }
  const button = form.querySelector("button[type=submit]");
  if (button) button.disabled = true;
  try {
    const answer = await api(form.dataset.method || "POST", form.dataset.api, formBody(form));
    showErrors(form, null);
    if (form.id === "token-form") { showSecret(answer); return; }
    if (form.dataset.next) { location.href = safeNext(form.dataset.next); return; }
    if (notice && form.dataset.done) { notice.textContent = form.dataset.done; notice.hidden = false; }
    // a manual trigger links to the runs it made
    if (notice && form.id === "trigger-form" && answer && answer.logIds) {
      for (const id of answer.logIds) {
        const link = document.createElement("a");
        link.href = "/runs/" + id;
        link.className = "new-run";
        link.textContent = "#" + id;
        notice.append(" ", link);
      }
    }
    if (form.id !== "trigger-form") form.reset();
  } catch (err) {
    showErrors(form, err);
  } finally {
    if (button) button.disabled = false;
  }
}

// "2026-12-01 10:00:00" in `zone` (an IANA name), or in the browser's zone when it is unknown.
function zoned(ms, zone) {
  const opts = { year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    second: "2-digit", hourCycle: "h23" };
  let parts;
  try { parts = new Intl.DateTimeFormat("en-CA", Object.assign({ timeZone: zone }, opts)).formatToParts(ms); }
  catch (e) { parts = new Intl.DateTimeFormat("en-CA", opts).formatToParts(ms); }
  const p = Object.fromEntries(parts.map((x) => [x.type, x.value]));
  return p.year + "-" + p.month + "-" + p.day + " " + p.hour + ":" + p.minute + ":" + p.second;
}

// The job form's preview of the next five fire times, asked of the API as the schedule changes.
function schedulePreview(form) {
  const list = document.getElementById("preview-times");
  const error = document.getElementById("preview-error");
  if (!list) return;
  let timer = null, asked = 0;
  const refresh = async () => {
    const n = ++asked;
    const type = form.elements.scheduleType.value;
    const zone = form.elements.timezone.value.trim() || form.dataset.defaultTz;
    const body = { scheduleType: type, scheduleConf: form.elements.scheduleConf.value,
      timezone: form.elements.timezone.value.trim(), count: 5 };
    if (type === "NONE") { list.replaceChildren(); error.textContent = ""; return; }
    try {
      const res = await api("POST", "/api/v1/schedule/preview", body);
      if (n !== asked) return;
      error.textContent = "";
      list.replaceChildren(...res.fireTimes.map((ms) => {
        const li = document.createElement("li");
        li.textContent = zoned(ms, zone) + " (" + zone + ")";
        return li;
      }));
    } catch (err) {
      if (n !== asked) return;
      list.replaceChildren();
      error.textContent = err.error || "";
    }
  };
  const later = () => { clearTimeout(timer); timer = setTimeout(refresh, 250); };
  for (const name of ["scheduleType", "scheduleConf", "timezone"]) {
    form.elements[name].addEventListener("input", later);
    form.elements[name].addEventListener("change", later);
  }
  refresh();
}

// Buttons that call the API and reload the page: start, stop, delete (after a confirmation).
async function callButton(button) {
  if (button.dataset.confirm && !confirm(button.dataset.confirm + "?")) return;
  button.disabled = true;
  try {
    const body = button.dataset.body ? JSON.parse(button.dataset.body) : undefined;
    const answer = await api(button.dataset.method || "POST", button.dataset.call, body);
    // "run again" opens the run it made
    if (button.dataset.openRun !== undefined && answer && answer.logIds && answer.logIds.length) {
      location.href = "/runs/" + answer.logIds[0];
      return;
    }
    location.reload();
  } catch (err) {
    alert(err.error || "request failed");
    button.disabled = false;
  }
}

function bindButtons(root) {
  for (const b of root.querySelectorAll("button[data-call]")) {
    b.addEventListener("click", () => callButton(b));
  }
}

function triggerDialog(button) {
  const dialog = document.getElementById("trigger-dialog");
  const form = document.getElementById("trigger-form");
  form.reset();
  showErrors(form, null);
  form.querySelector(".notice").hidden = true;
  form.dataset.api = "/api/v1/jobs/" + button.dataset.trigger + "/trigger";
  document.getElementById("trigger-title").textContent = button.dataset.title;
  dialog.showModal();
}

// The run page's log: read from the first line on, then followed every second while the run
// has no result; a page of lines at a time, so a long log arrives in pieces.
function followLog(pre) {
  const id = pre.dataset.logId;
  const state = document.getElementById("tail-state");
  const error = document.getElementById("run-log-error");
  let next = 1, failures = 0;
  const step = async () => {
    try {
      const res = await api("GET", "/api/v1/logs/" + id + "/content?fromLine=" + next);
      failures = 0;
      error.textContent = "";
      if (res.logContent) {
        const atBottom = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
        // XXL-JOB writes its markers as "<br>"; they are line breaks, and everything else
        // stays text (a text node escapes it)
        const content = res.logContent.replace(/<br\s*\/?>/gi, "\n");
        const text = content.endsWith("\n") ? content : content + "\n";
        pre.append(document.createTextNode(text));
        if (atBottom) pre.scrollTop = pre.scrollHeight;
      }
      if (res.toLineNum >= next) next = res.toLineNum + 1;
      if (res.isEnd) {
        state.textContent = state.dataset.done || "";
        if (pre.dataset.follow === "true") setTimeout(() => location.reload(), 500);
        return;
      }
      const more = res.toLineNum >= res.fromLineNum;
      setTimeout(step, more ? 0 : 1000);
    } catch (err) {
      error.textContent = err.error || "";
      failures += 1;
      if (failures < 30) setTimeout(step, Math.min(1000 * failures, 10000));
    }
  };
  if (pre.dataset.follow === "true") state.textContent = state.dataset.following || "";
  const download = document.getElementById("run-log-download");
  if (download) {
    download.addEventListener("click", () => {
      // what has been read so far, as the page shows it
      const blob = new Blob([pre.textContent], { type: "text/plain;charset=utf-8" });
      const url = URL.createObjectURL(blob);
      const link = document.createElement("a");
      link.href = url;
      link.download = "run-" + id + ".log";
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
    });
  }
  step();
}

// Time filters: typed in the browser's zone, sent as epoch ms.
function msFilters(form) {
  for (const input of form.querySelectorAll("input[data-ms-for]")) {
    const hidden = form.elements[input.dataset.msFor];
    const ms = Number(hidden.value);
    if (ms > 0) {
      const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
      input.value = d.toISOString().slice(0, 19);
    }
  }
  form.addEventListener("submit", () => {
    for (const input of form.querySelectorAll("input[data-ms-for]")) {
      const hidden = form.elements[input.dataset.msFor];
      hidden.value = input.value ? String(new Date(input.value).getTime()) : "";
      if (!hidden.value) hidden.disabled = true;
    }
    for (const el of form.elements) if (el.name && el.value === "") el.disabled = true;
  });
}

// The runs filter's job picker: type an id or part of a description; matching jobs (of the
// chosen group) are offered as `#id description`, and the chosen one's id is what is sent.
function jobPicker(form) {
  const search = document.getElementById("runs-job-search");
  const hidden = form.elements.job;
  const choices = document.getElementById("runs-job-choices");
  const error = form.querySelector("[data-error-for=job]");
  let timer = 0, asked = 0, resolved = false;
  const idOf = (text) => { const m = text.trim().match(/^#?(\d+)(\s|$)/); return m ? m[1] : ""; };
  const matching = async (text) => {
    const query = new URLSearchParams({ jobDesc: text, limit: "20" });
    if (form.elements.group.value) query.set("jobGroup", form.elements.group.value);
    const page = await api("GET", "/api/v1/jobs?" + query);
    return page.items || [];
  };
  const suggest = async () => {
    const text = search.value.trim();
    hidden.value = idOf(text);
    if (!text || hidden.value) return;
    const mine = ++asked;
    try {
      const jobs = await matching(text);
      if (mine !== asked) return;
      choices.replaceChildren(...jobs.map((j) => {
        const option = document.createElement("option");
        option.value = "#" + j.id + " " + j.jobDesc;
        return option;
      }));
    } catch (err) {
      // the offered jobs stay as they were; the filter still takes an id
    }
  };
  search.addEventListener("input", () => {
    error.textContent = "";
    hidden.value = idOf(search.value);
    clearTimeout(timer);
    timer = setTimeout(suggest, 150);
  });
  // a description typed but not chosen: the first matching job, or a word that none matches
  form.addEventListener("submit", async (e) => {
    const text = search.value.trim();
    if (resolved || !text || idOf(text)) return;
    e.preventDefault();
    e.stopImmediatePropagation();
    try {
      const jobs = await matching(text);
      if (!jobs.length) { error.textContent = search.dataset.none; return; }
      hidden.value = String(jobs[0].id);
      search.value = "#" + jobs[0].id + " " + jobs[0].jobDesc;
      resolved = true;
      form.requestSubmit();
    } catch (err) {
      error.textContent = err.error || "request failed";
    }
  }, { capture: true });
}

// The GLUE editor's gutter: one number per line of the textarea, scrolled with it. Returns the
// function that brings it up to date.
function glueGutter(area, gutter) {
  let shown = 0;
  const sync = () => {
    const lines = area.value.split("\n").length;
    if (lines !== shown) {
      shown = lines;
      gutter.textContent = Array.from({ length: lines }, (_, i) => String(i + 1)).join("\n");
    }
    gutter.scrollTop = area.scrollTop;
  };
  area.addEventListener("input", sync);
  area.addEventListener("scroll", () => { gutter.scrollTop = area.scrollTop; });
  window.addEventListener("resize", sync);
  sync();
  return sync;
}

// Replaces area's text from `start` to `end` with `text`, on the undo stack where the browser
// allows it.
function glueReplace(area, start, end, text) {
  area.setSelectionRange(start, end);
  if (!document.execCommand("insertText", false, text)) {
    area.setRangeText(text, start, end, "end");
    area.dispatchEvent(new Event("input"));
  }
}

// Tab inserts four spaces; Shift+Tab takes up to four from the start of each selected line.
// Escape, then Tab, leaves the editor as Tab does elsewhere.
function glueIndent(area) {
  let escaped = false;
  area.addEventListener("keydown", (e) => {
    if (e.key === "Escape") { escaped = true; return; }
    const plain = e.key === "Tab" && !e.ctrlKey && !e.altKey && !e.metaKey && !escaped;
    escaped = false;
    if (!plain) return;
    e.preventDefault();
    const value = area.value, start = area.selectionStart, end = area.selectionEnd;
    if (!e.shiftKey) { glueReplace(area, start, end, "    "); return; }
    const first = value.lastIndexOf("\n", start - 1) + 1;
    const last = value.indexOf("\n", Math.max(start, end - 1));
    const stop = last === -1 ? value.length : last;
    let fromFirst = 0, removed = 0;
    const lines = value.slice(first, stop).split("\n").map((line, i) => {
      const n = line.match(/^ {0,4}/)[0].length;
      if (i === 0) fromFirst = n;
      removed += n;
      return line.slice(n);
    });
    if (removed === 0) return;
    glueReplace(area, first, stop, lines.join("\n"));
    const from = Math.max(first, start - fromFirst);
    area.setSelectionRange(from, Math.max(from, end - removed));
  });
}

// The saved versions' rows, newest first, built as text (remarks may hold markup).
function glueVersionRows(table, versions) {
  const rows = versions.map((v) => {
    const tr = document.createElement("tr");
    tr.dataset.versionId = String(v.id);
    tr.title = v.glueType;
    const id = document.createElement("td");
    id.textContent = String(v.id);
    const when = document.createElement("td");
    const time = document.createElement("time");
    time.dataset.ms = String(v.addTime);
    when.append(time);
    const remark = document.createElement("td");
    remark.className = "msg";
    remark.textContent = v.glueRemark;
    const actions = document.createElement("td");
    actions.className = "actions";
    for (const [attr, label] of [["viewVersion", table.dataset.view], ["restoreVersion", table.dataset.restore]]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "link";
      b.dataset[attr] = String(v.id);
      b.textContent = label;
      actions.append(b);
    }
    tr.append(id, when, remark, actions);
    return tr;
  });
  table.tBodies[0].replaceChildren(...rows);
  document.getElementById("glue-no-versions").hidden = rows.length > 0;
  localTimes(table);
}

// Shows a saved version's source, read-only, below the editor.
async function glueView(url, id, table) {
  const panel = document.getElementById("glue-view");
  const error = document.getElementById("glue-versions-error");
  try {
    const v = await api("GET", url + "/" + encodeURIComponent(id));
    error.textContent = "";
    document.getElementById("glue-view-id").textContent = String(v.id);
    document.getElementById("glue-view-remark").textContent = v.glueRemark;
    document.getElementById("glue-view-type").textContent = v.glueType;
    const time = document.getElementById("glue-view-time");
    time.dataset.ms = String(v.addTime);
    localTimes(panel);
    document.getElementById("glue-view-source").textContent = v.glueSource;
    panel.dataset.version = String(v.id);
    panel.hidden = false;
    for (const tr of table.tBodies[0].rows) tr.classList.toggle("on", tr.dataset.versionId === String(v.id));
    panel.scrollIntoView({ block: "nearest" });
  } catch (err) {
    error.textContent = err.error || "request failed";
  }
}

// Makes a saved version current again (a new save), after a confirmation.
async function glueRestore(url, id, question) {
  if (!confirm(question + " #" + id + "?")) return;
  try {
    await api("POST", url + "/" + encodeURIComponent(id) + "/restore");
    location.reload();
  } catch (err) {
    document.getElementById("glue-versions-error").textContent = err.error || "request failed";
  }
}

// The source field: CodeMirror (assets/editor.js) when it loaded, else the textarea with its
// own gutter and indenting.
function glueSourceField(form) {
  const area = form.elements.glueSource;
  if (window.JobwheelEditor) {
    try {
      const editor = window.JobwheelEditor.create(area, form.dataset.glueType, area.getAttribute("aria-label"),
        form.dataset.styleNonce);
      document.getElementById("glue-gutter").hidden = true;
      form.querySelector(".code-editor").classList.add("mounted");
      return editor;
    } catch (err) {
      console.error("the code editor did not start; the plain field stays", err);
      area.hidden = false;
    }
  }
  glueGutter(area, document.getElementById("glue-gutter"));
  glueIndent(area);
  return area;
}

// Shows a side-by-side diff of the version in the view panel (left) and the editor's text.
function glueCompare(panel, source, form) {
  const box = document.getElementById("glue-diff");
  const older = document.getElementById("glue-view-source");
  box.replaceChildren();
  if (!window.JobwheelEditor || box.hidden === false) {
    box.hidden = true;
    older.hidden = false;
    return;
  }
  const labels = [panel.dataset.labelOld + " #" + panel.dataset.version, panel.dataset.labelNew];
  window.JobwheelEditor.diff(box, older.textContent, source.value, form.dataset.glueType, labels,
    form.dataset.styleNonce);
  box.hidden = false;
  older.hidden = true;
}

// The GLUE page: editor, save through the API, versions to view, compare or restore.
function glueEditor(form) {
  const source = glueSourceField(form);
  const remark = form.elements.glueRemark;
  const notice = form.querySelector(".notice");
  const table = document.getElementById("glue-versions");
  const url = form.dataset.glueApi;
  let saved = source.value;
  window.addEventListener("beforeunload", (e) => { if (source.value !== saved) e.preventDefault(); });
  form.noValidate = true;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    notice.hidden = true;
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const res = await api("PUT", url, { glueSource: source.value, glueRemark: remark.value });
      showErrors(form, null);
      saved = source.value;
      remark.value = "";
      notice.textContent = form.dataset.done;
      notice.hidden = false;
      const updated = document.getElementById("glue-updated");
      updated.dataset.ms = String(res.current.glueUpdatetime);
      document.getElementById("glue-current-remark").textContent = res.current.glueRemark;
      localTimes(form);
      glueVersionRows(table, res.versions);
    } catch (err) {
      showErrors(form, err);
    } finally {
      button.disabled = false;
    }
  });
  const panel = document.getElementById("glue-view");
  const closeDiff = () => {
    document.getElementById("glue-diff").hidden = true;
    document.getElementById("glue-diff").replaceChildren();
    document.getElementById("glue-view-source").hidden = false;
  };
  table.addEventListener("click", (e) => {
    const view = e.target.closest("button[data-view-version]");
    if (view) { closeDiff(); glueView(url, view.dataset.viewVersion, table); return; }
    const restore = e.target.closest("button[data-restore-version]");
    if (restore) glueRestore(url, restore.dataset.restoreVersion, table.dataset.confirm);
  });
  document.getElementById("glue-view-close").addEventListener("click", () => {
    closeDiff();
    panel.hidden = true;
    for (const tr of table.tBodies[0].rows) tr.classList.remove("on");
  });
  document.getElementById("glue-view-compare").addEventListener("click", () => glueCompare(panel, source, form));
  document.getElementById("glue-view-restore").addEventListener("click", () =>
    glueRestore(url, panel.dataset.version, table.dataset.confirm));
}

document.addEventListener("DOMContentLoaded", () => {
  const glueForm = document.getElementById("glue-form");
  if (glueForm) glueEditor(glueForm);
  const runLog = document.getElementById("run-log");
  if (runLog) followLog(runLog);
  const runsFilter = document.getElementById("runs-filter");
  if (runsFilter) { jobPicker(runsFilter); msFilters(runsFilter); }
  const clearOpen = document.getElementById("clear-open");
  if (clearOpen) {
    clearOpen.addEventListener("click", () => document.getElementById("clear-dialog").showModal());
    const form = document.getElementById("clear-form");
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const q = new URLSearchParams();
      if (form.elements.jobGroup.value) q.set("jobGroup", form.elements.jobGroup.value);
      if (form.elements.jobId.value.trim()) q.set("jobId", form.elements.jobId.value.trim());
      const [name, value] = form.elements.rule.value.split("=");
      q.set(name, value);
      try {
        const res = await api("DELETE", "/api/v1/logs?" + q.toString());
        showErrors(form, null);
        const notice = form.querySelector(".notice");
        notice.textContent = res.deleted + " ✓";
        notice.hidden = false;
        setTimeout(() => location.reload(), 800);
      } catch (err) {
        showErrors(form, err);
      }
    });
  }
  const jobForm = document.getElementById("job-form");
  if (jobForm) schedulePreview(jobForm);
  bindButtons(document);
  for (const b of document.querySelectorAll("button[data-trigger]")) {
    b.addEventListener("click", () => triggerDialog(b));
  }
  for (const b of document.querySelectorAll("dialog button[data-close]")) {
    b.addEventListener("click", () => b.closest("dialog").close());
  }
  const triggerForm = document.getElementById("trigger-form");
  if (triggerForm) {
    triggerForm.noValidate = true;
    triggerForm.addEventListener("submit", (e) => { e.preventDefault(); submitApiForm(triggerForm); });
  }
  localTimes(document);
  // times are shown in the browser's zone: the lists that show them say which
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
  for (const el of document.querySelectorAll("[data-browser-zone]")) el.textContent = zone;
  for (const sel of document.querySelectorAll("#lang")) {
    sel.addEventListener("change", () => setLang(sel.value));
  }
  for (const sel of document.querySelectorAll("select[data-autosubmit]")) {
    sel.addEventListener("change", () => sel.form.submit());
  }
  for (const form of document.querySelectorAll("form[data-api]")) {
    // the API checks every field and its message is shown beside the field
    form.noValidate = true;
    form.addEventListener("submit", (e) => { e.preventDefault(); submitApiForm(form); });
  }
  const logout = document.getElementById("logout");
  if (logout) {
    logout.addEventListener("click", async () => {
      try { await api("POST", "/api/v1/auth/logout"); } finally { location.href = "/login"; }
    });
  }
});
