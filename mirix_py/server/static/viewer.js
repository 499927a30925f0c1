// mirix-py memory viewer: one page over the REST API. Everything from the server is inserted with
// textContent (never innerHTML), and the page's CSP allows scripts from this origin only.
"use strict";

const TYPES = ["core", "episodic", "semantic", "procedural", "resource", "knowledge_vault"];
const FIXED = new Set(["id", "user_id", "memory_type", "created_at", "updated_at", "source_ids"]);
const state = { key: sessionStorage.getItem("mirix.key") || "", user: null, tab: "episodic", selected: null,
                results: [] };
const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function setStatus(text, isError) {
  const s = $("status");
  s.textContent = text;
  s.classList.toggle("error", !!isError);
}

async function api(method, path, body) {
  const opts = { method, headers: { "Authorization": "Bearer " + state.key } };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  if (res.status === 204) return null;
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  if (!res.ok) {
    const msg = data && data.message ? data.message : res.status + " " + res.statusText;
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return data;
}

const userPath = () => "/v1/users/" + encodeURIComponent(state.user);

function when(iso) {
  if (!iso) return "undated";
  return iso.replace("T", " ").replace(/:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, "");
}

function summary(m) {
  switch (m.memory_type) {
    case "core": return "[" + m.label + "] " + m.value;
    case "episodic": return (m.actor ? m.actor + ": " : "") + m.summary + (m.details && m.details !== m.summary ? " — " + m.details : "");
    case "semantic": return m.name + ": " + m.summary + (m.details ? " " + m.details : "");
    case "procedural": return m.summary + (m.steps && m.steps.length ? " (" + m.steps.length + " steps)" : "");
    case "resource": return m.title + (m.summary ? ": " + m.summary : "");
    case "knowledge_vault": return "[" + m.entry_type + ", " + m.sensitivity + "] " + m.caption;
    default: return m.id;
  }
}

function itemNode(m, score) {
  const li = el("li", "item t-" + m.memory_type);
  li.dataset.id = m.id;
  const meta = el("div", "meta");
  meta.append(el("span", "badge b-" + m.memory_type, m.memory_type.replace("_", " ")));
  meta.append(el("span", "when", when(m.occurred_at || m.created_at)));
  if (score !== undefined) meta.append(el("span", "score", "score " + score.toFixed(3)));
  meta.append(el("span", "id", m.id));
  li.append(meta, el("div", "text", summary(m)));
  li.addEventListener("click", () => openDetail(m.id));
  if (state.selected === m.id) li.classList.add("selected");
  return li;
}

function showPanel(which) {
  $("items").hidden = which !== "items";
  $("timeline").hidden = which !== "timeline";
  $("core").hidden = which !== "core";
  $("inputs").hidden = which !== "inputs";
  $("screen").hidden = which !== "screen";
}

function activateTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === tab);
}

async function loadCounts() {
  const stats = await api("GET", userPath() + "/stats");
  $("mode").textContent = "mode: " + stats.mode + " · " + stats.database + " · " + stats.search;
  for (const t of TYPES) {
    const b = $("tab-" + t);
    let c = b.querySelector(".count");
    if (!c) { c = el("span", "count"); b.append(c); }
    c.textContent = "(" + ((stats.memories || {})[t] || 0) + ")";
  }
}

async function showTab(tab) {
  if (!state.user) return;
  activateTab(tab);
  try {
    if (tab === "core") return await showCore();
    if (tab === "timeline") return await showTimeline();
    if (tab === "inputs") return await showInputs();
    if (tab === "screen") return await showScreen();
    if (tab === "search") return renderResults();
    const user = state.user;
    const items = await api("GET", userPath() + "/memories?memory_type=" + tab + "&limit=200");
    if (state.user !== user) return;  // the page was locked or another user opened meanwhile
    const ul = $("items");
    ul.replaceChildren(...items.map((m) => itemNode(m)));
    if (!items.length) ul.append(el("li", "empty", "No " + tab.replace("_", " ") + " memories."));
    showPanel("items");
    setStatus(items.length + " " + tab.replace("_", " ") + " memories of " + state.user + ".");
  } catch (e) { setStatus(e.message, true); }
}

// The input log: what came in (text, messages, screenshots with their app and window), its status,
// and why it failed or was degraded; failed and degraded inputs can be run again.
async function showInputs() {
  const user = state.user;
  const inputs = await api("GET", userPath() + "/inputs?limit=200");
  if (state.user !== user) return;
  const ul = $("input-list");
  ul.replaceChildren();
  for (const i of inputs) {
    const li = el("li", "input s-" + i.status);
    li.dataset.id = i.id;
    const meta = el("div", "meta");
    meta.append(el("span", "badge status", i.status), el("span", "when", when(i.occurred_at)),
                el("span", "kind", i.kind), el("span", "id", i.id));
    li.append(meta);
    const md = i.metadata || {};
    if (md.app || md.window_title) li.append(el("div", "text", [md.app, md.window_title].filter(Boolean).join(" · ")));
    if (md.thumbnail) li.append(thumbnailNode(i.id, user));
    if (i.error) li.append(el("div", "error", i.error));
    ul.append(li);
  }
  if (!inputs.length) ul.append(el("li", "empty", "No inputs."));
  $("retry-btn").hidden = !inputs.some((i) => i.status === "failed" || i.status === "degraded");
  showPanel("inputs");
  setStatus(inputs.length + " input(s) of " + state.user + ".");
}

// Screen activity (GET .../screen-activity): screenshots grouped by app and window, newest first,
// each with its time range, frame count, the text read, a few kept thumbnails and the memories made
// from it (they open in the detail panel).
const SCREEN_THUMBS = 4;

function spread(items, n) {
  if (items.length <= n) return items;
  const out = [];
  for (let i = 0; i < n; i++) out.push(items[Math.round(i * (items.length - 1) / (n - 1))]);
  return out;
}

function timeRange(first, last) {
  const a = when(first), b = when(last);
  if (a === b) return a;
  return a + " – " + (a.slice(0, 10) === b.slice(0, 10) ? b.slice(11) : b);
}

const MEMORY_KIND = { epi: "episode", res: "resource" };

async function showScreen() {
  const user = state.user;
  const groups = await api("GET", userPath() + "/screen-activity?limit=100");
  if (state.user !== user) return;
  const ul = $("screen-list");
  ul.replaceChildren();
  for (const g of groups) {
    const li = el("li", "group");
    li.dataset.input = g.input_ids[0];
    li.append(el("div", "where", [g.app, g.window_title].filter(Boolean).join(" · ") || "(unknown window)"));
    const meta = el("div", "meta");
    meta.append(el("span", "when", timeRange(g.first_at, g.last_at)),
                el("span", "frames", g.frames + " frame" + (g.frames === 1 ? "" : "s")));
    if (g.text_from.length) meta.append(el("span", "from", "text from " + g.text_from.join(" + ").replace("_", " ")));
    li.append(meta);
    if (g.thumbnail_ids.length) {
      const thumbs = el("div", "thumbs");
      thumbs.append(...spread(g.thumbnail_ids, SCREEN_THUMBS).map((id) => thumbnailNode(id, user)));
      li.append(thumbs);
    }
    li.append(el("div", "text" + (g.text ? "" : " none"), g.text ? g.text + (g.text_truncated ? "\n…" : "")
                                                              : "No text kept for these frames."));
    if (g.memory_ids.length) {
      const links = el("div", "memories");
      links.append(el("span", "label", "Memories:"));
      for (const id of g.memory_ids) {
        const a = el("button", "memlink", (MEMORY_KIND[id.split("_")[0]] || "memory") + " " + id.slice(-8));
        a.type = "button";
        a.dataset.id = id;
        a.title = id;
        a.addEventListener("click", () => openDetail(id));
        links.append(a);
      }
      li.append(links);
    }
    ul.append(li);
  }
  if (!groups.length) ul.append(el("li", "empty", "No screenshots yet (mirix capture, or POST .../screenshots)."));
  showPanel("screen");
  const frames = groups.reduce((n, g) => n + g.frames, 0);
  setStatus(groups.length + " screen group(s), " + frames + " frame(s) of " + state.user + ".");
}

// A screenshot input's kept thumbnail. An <img src> cannot send the API key, so the image is
// fetched with it and shown from a blob: URL; an expired one (404) leaves no image.
function thumbnailNode(inputId, user) {
  const img = el("img", "thumb");
  img.alt = "screen at this time";
  img.hidden = true;
  fetch(userPath() + "/inputs/" + encodeURIComponent(inputId) + "/thumbnail",
        { headers: { "Authorization": "Bearer " + state.key } })
    .then((res) => (res.ok && state.user === user ? res.blob() : null))
    .then((blob) => {
      if (!blob) return;
      const url = URL.createObjectURL(blob);
      img.addEventListener("load", () => { img.hidden = false; img.classList.add("loaded"); URL.revokeObjectURL(url); },
                           { once: true });
      img.src = url;
    })
    .catch(() => {});
  return img;
}

async function retryInputs() {
  try {
    const results = await api("POST", userPath() + "/inputs/retry");
    await refresh();
    setStatus("Retried " + results.length + " input(s): " + results.map((r) => r.status).join(", ") + ".");
  } catch (e) { setStatus(e.message, true); }
}

async function showCore() {
  const blocks = await api("GET", userPath() + "/core");
  const box = $("core");
  box.replaceChildren();
  for (const label of ["persona", "human"]) {
    const b = blocks[label];
    const div = el("div", "block");
    div.append(el("h4", null, label + " (" + (b.value || "").length + "/" + b.limit + " chars)"));
    div.append(el("div", "text", b.value || "(empty)"));
    if (b.id) { div.classList.add("item"); div.dataset.id = b.id; div.addEventListener("click", () => openDetail(b.id)); }
    box.append(div);
  }
  showPanel("core");
  setStatus("Core memory of " + state.user + ".");
}

async function showTimeline() {
  const items = await api("GET", userPath() + "/memories?memory_type=episodic&limit=500");
  const box = $("timeline");
  box.replaceChildren();
  const days = new Map();
  for (const m of items) {
    const day = (m.occurred_at || m.created_at || "").slice(0, 10) || "undated";
    if (!days.has(day)) days.set(day, []);
    days.get(day).push(m);
  }
  for (const [day, events] of days) {
    const section = el("div", "day");
    section.dataset.day = day;
    section.append(el("h4", null, day));
    for (const m of events) {
      const node = itemNode(m);
      node.classList.add("event");
      section.append(node);
    }
    box.append(section);
  }
  if (!items.length) box.append(el("div", "empty", "No episodes yet."));
  showPanel("timeline");
  setStatus(items.length + " episodes over " + days.size + " day(s).");
}

function renderResults() {
  const ul = $("items");
  ul.replaceChildren(...state.results.map((h) => itemNode(h.memory, h.score)));
  if (!state.results.length) ul.append(el("li", "empty", "No matches."));
  showPanel("items");
}

async function search(ev) {
  ev.preventDefault();
  const query = $("search-input").value.trim();
  if (!query || !state.user) return;
  try {
    state.results = await api("POST", userPath() + "/search", { query, limit: 25, method: $("search-method").value });
    $("tab-search").hidden = false;
    activateTab("search");
    renderResults();
    setStatus(state.results.length + " result(s) for “" + query + "”.");
  } catch (e) { setStatus(e.message, true); }
}

function editable(m) {
  const out = {};
  for (const [k, v] of Object.entries(m)) if (!FIXED.has(k)) out[k] = v;
  return out;
}

async function openDetail(id) {
  try {
    const m = await api("GET", userPath() + "/memories/" + encodeURIComponent(id));
    state.selected = id;
    state.current = m;
    for (const li of document.querySelectorAll(".item")) li.classList.toggle("selected", li.dataset.id === id);
    $("detail").hidden = false;
    $("detail-title").textContent = m.memory_type.replace("_", " ") + " · " + m.id;
    const dl = $("detail-meta");
    dl.replaceChildren();
    for (const k of ["created_at", "updated_at", "occurred_at", "source_ids"]) {
      dl.append(el("dt", null, k), el("dd", null, Array.isArray(m[k]) ? m[k].join(", ") || "—" : (m[k] || "—")));
    }
    $("edit-fields").value = JSON.stringify(editable(m), null, 2);
    resetDelete();
    await loadHistory(id);
  } catch (e) { setStatus(e.message, true); }
}

async function loadHistory(id) {
  const events = await api("GET", userPath() + "/memories/" + encodeURIComponent(id) + "/history");
  const ol = $("history");
  ol.replaceChildren();
  for (const e of events) {
    const li = el("li", "event-" + e.operation);
    li.append(el("span", "op", e.operation), document.createTextNode(" by " + e.actor + " at " + when(e.created_at)));
    if (e.input_id) {
      li.append(document.createTextNode(" (input " + e.input_id + ")"));
      // take back everything that input did (POST .../inputs/{id}/undo), with a second click to confirm
      const undo = el("button", "undo-input", "Undo input");
      undo.type = "button";
      undo.dataset.input = e.input_id;
      undo.addEventListener("click", () => undoInput(undo));
      li.append(document.createTextNode(" "), undo);
    }
    const changed = [];
    if (e.before && e.after) {
      for (const k of Object.keys(e.after)) {
        if (k === "updated_at") continue;
        if (JSON.stringify(e.before[k]) !== JSON.stringify(e.after[k])) changed.push(k + ": " + JSON.stringify(e.before[k]) + " → " + JSON.stringify(e.after[k]));
      }
    } else if (e.after) {
      changed.push(summary(e.after));
    }
    if (changed.length) li.append(el("pre", null, changed.join("\n")));
    ol.append(li);
  }
}

async function save() {
  const m = state.current;
  if (!m) return;
  let fields;
  try { fields = JSON.parse($("edit-fields").value); } catch (e) { return setStatus("The fields are not valid JSON: " + e.message, true); }
  const before = editable(m);
  const changed = {};
  for (const [k, v] of Object.entries(fields)) if (JSON.stringify(before[k]) !== JSON.stringify(v)) changed[k] = v;
  if (!Object.keys(changed).length) return setStatus("Nothing changed.");
  try {
    await api("PATCH", userPath() + "/memories/" + encodeURIComponent(m.id), { fields: changed });
    setStatus("Saved " + Object.keys(changed).join(", ") + " of " + m.id + ".");
    await openDetail(m.id);
    await refresh();
  } catch (e) { setStatus(e.message, true); }
}

async function undoInput(button) {
  if (!button.dataset.armed) { button.dataset.armed = "1"; button.textContent = "Really undo?"; return; }
  const input = button.dataset.input;
  try {
    const changes = await api("POST", userPath() + "/inputs/" + encodeURIComponent(input) + "/undo");
    const id = state.selected;
    const gone = changes.some((c) => c.memory_id === id && c.operation === "delete");
    if (gone || !id) closeDetail(); else await openDetail(id);
    await refresh();  // sets its own status line: the undo's comes after it
    setStatus("Undid input " + input + ": " + changes.length + " change(s).");
  } catch (e) { setStatus(e.message, true); }
}

function resetDelete() {
  const b = $("delete-btn");
  b.textContent = "Delete";
  b.dataset.armed = "";
}

async function remove() {
  const b = $("delete-btn");
  const m = state.current;
  if (!m) return;
  if (!b.dataset.armed) { b.dataset.armed = "1"; b.textContent = "Really delete?"; return; }
  try {
    await api("DELETE", userPath() + "/memories/" + encodeURIComponent(m.id));
    setStatus("Deleted " + m.id + ".");
    closeDetail();
    state.results = state.results.filter((h) => h.memory.id !== m.id);
    await refresh();
  } catch (e) { setStatus(e.message, true); }
}

function closeDetail() {
  $("detail").hidden = true;
  state.selected = null;
  state.current = null;
}

async function refresh() {
  await loadCounts();
  await showTab(state.tab);
}

async function openUser(user) {
  if (!user) return;
  state.user = user;
  // the picker shows the user now open, one typed in too (added to the list for this page)
  const select = $("user-select");
  if (![...select.options].some((o) => o.value === user)) select.append(new Option(user, user));
  select.value = user;
  closeDetail();
  $("tab-search").hidden = true;
  for (const id of USER_CONTROLS) $(id).disabled = false;
  try {
    await loadCounts();
    await showTab(state.tab === "search" ? "episodic" : state.tab);
  } catch (e) { setStatus(e.message, true); }
}

// Controls that act for the open user: off until one is open, off again when the page locks.
const USER_CONTROLS = ["search-input", "search-method", "search-btn", "chat-input", "chat-remember", "chat-send",
                       "add-input", "add-btn"];

// Chat: the answer, whether a model wrote it or the offline engine picked memories, and the cited
// memories as items that open like any other.
async function ask(ev) {
  ev.preventDefault();
  const message = $("chat-input").value.trim();
  if (!message || !state.user) return;
  const user = state.user;
  $("chat-send").disabled = true;
  setStatus("Asking…");
  try {
    const r = await api("POST", userPath() + "/chat", { message, remember: $("chat-remember").checked });
    if (state.user !== user) return;
    $("chat-answer").hidden = false;
    $("chat-text").textContent = r.answer;
    $("chat-mode").textContent = r.mode === "offline"
      ? "Offline: no model is configured, so these are the memories that match, cited."
      : (r.fallback ? "The model gave no usable answer (" + r.fallback + "); the best memories instead."
                    : "Answered by the model from the memories cited.");
    const cited = [];
    for (const id of r.memory_ids) {
      try { cited.push(await api("GET", userPath() + "/memories/" + encodeURIComponent(id))); } catch (e) { /* gone */ }
    }
    $("chat-cited").replaceChildren(...cited.map((m) => itemNode(m)));
    setStatus("Answered with " + cited.length + " cited memor" + (cited.length === 1 ? "y" : "ies") +
              (r.update_input_ids.length ? "; the exchange is being remembered." : "."));
  } catch (e) { setStatus(e.message, true); }
  finally { $("chat-send").disabled = !state.user; }
}

async function addMemory(ev) {
  ev.preventDefault();
  const content = $("add-input").value.trim();
  if (!content || !state.user) return;
  $("add-btn").disabled = true;
  try {
    const r = await api("POST", userPath() + "/memories", { content, wait: true });
    $("add-input").value = "";
    await refresh();
    setStatus("Remembered (" + r.status + ", " + r.mode + "): " + r.changes.length + " change(s).");
  } catch (e) { setStatus(e.message, true); }
  finally { $("add-btn").disabled = !state.user; }
}

// Each connect attempt gets a number; only the latest may change the page, so a slow answer for an
// earlier key (the automatic reconnect on load, say) can never unlock the page after a rejection.
let connectAttempt = 0;

function lockPage() {
  state.user = null;
  closeDetail();
  $("user-select").replaceChildren();
  for (const id of ["user-select", "user-input", "user-open", ...USER_CONTROLS]) $(id).disabled = true;
  $("chat-answer").hidden = true;
  for (const id of ["items", "timeline", "core", "screen-list"]) $(id).replaceChildren();
}

async function connect(ev) {
  if (ev) ev.preventDefault();
  state.key = $("api-key").value.trim() || state.key;
  if (!state.key) return setStatus("Enter an API key.", true);
  const attempt = ++connectAttempt;
  try {
    const res = await api("GET", "/v1/users");
    if (attempt !== connectAttempt) return;
    sessionStorage.setItem("mirix.key", state.key);
    const sel = $("user-select");
    sel.replaceChildren(...res.users.map((u) => { const o = el("option", null, u); o.value = u; return o; }));
    sel.disabled = !res.users.length;
    $("user-input").disabled = !res.all_users;
    $("user-open").disabled = false;
    setStatus("Connected: " + res.users.length + " user(s)" + (res.all_users ? " with data (this key may open any user)." : "."));
    if (res.users.length) await openUser(res.users[0]);
  } catch (e) {
    if (attempt !== connectAttempt) return;
    if (e.status === 401) {
      sessionStorage.removeItem("mirix.key");
      state.key = "";
      lockPage();
    }
    setStatus(e.status === 401 ? "That key is not valid." : e.message, true);
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("connect-form").addEventListener("submit", connect);
  $("user-select").addEventListener("change", (e) => openUser(e.target.value));
  $("user-form").addEventListener("submit", (e) => { e.preventDefault(); openUser($("user-input").value.trim() || $("user-select").value); });
  $("search-form").addEventListener("submit", search);
  $("chat-form").addEventListener("submit", ask);
  $("add-form").addEventListener("submit", addMemory);
  $("retry-btn").addEventListener("click", retryInputs);
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("save-btn").addEventListener("click", save);
  $("delete-btn").addEventListener("click", remove);
  $("close-btn").addEventListener("click", closeDetail);
  activateTab(state.tab);
  if (state.key) { $("api-key").value = state.key; connect(); }
});
