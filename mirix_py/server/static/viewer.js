// mirix-py memory viewer: one page over the REST API. Everything from the server is inserted with
// textContent (never innerHTML), and the page's CSP allows scripts from this origin only.
"use strict";

const TYPES = ["core", "episodic", "semantic", "procedural", "resource", "knowledge_vault"];
const FIXED = new Set(["id", "user_id", "memory_type", "created_at", "updated_at", "source_ids"]);
const CONFIRM_AFTER_MS = 700;  // longer than a double-click, so its second click cannot confirm
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d/;
const state = { key: sessionStorage.getItem("mirix.key") || "", user: null, tab: "episodic", selected: null,
                current: null, search: null, counts: {}, listed: [], more: false, next: null };
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

// Is this reply still for what is shown? Each kind of view or action ("list": the open tab's panel,
// "detail", "counts", "chat", "edit", ...) numbers its requests; a reply may change the page only
// while its request is the newest of its kind and its user is still the open one. Every async view
// checks here once its awaits are done, so a slow reply for another user or tab is dropped.
const newest = {};

function ticket(kind) {
  newest[kind] = (newest[kind] || 0) + 1;
  return { kind, n: newest[kind], user: state.user };
}

function isCurrent(t) {
  return newest[t.kind] === t.n && t.user === state.user;
}

// A server started with --no-auth needs no key: no Authorization header is sent without one.
function authHeaders() {
  return state.key ? { "Authorization": "Bearer " + state.key } : {};
}

function unreachable() {
  return new Error("The server at " + location.host + " cannot be reached: is `mirix serve` still running? " +
                   "Try again when it is back.");
}

async function api(method, path, body) {
  const res = await send(method, path, body);
  if (res.status === 204) return null;
  try { return await res.json(); } catch (e) { return null; }
}

// The server's reply, whose headers some calls read; an error reply is thrown with its message.
async function send(method, path, body) {
  const opts = { method, headers: authHeaders() };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let res;
  try { res = await fetch(path, opts); } catch (e) { throw unreachable(); }
  if (res.ok) return res;
  let data = null;
  try { data = await res.json(); } catch (e) { data = null; }
  const msg = data && data.message ? data.message : res.status + " " + res.statusText;
  const err = new Error(msg);
  err.status = res.status;
  err.code = data && data.error;  // the error body's code, e.g. "later_changes"
  throw err;
}

const userPath = () => "/v1/users/" + encodeURIComponent(state.user);
const memoryPath = (id) => userPath() + "/memories/" + encodeURIComponent(id);
const typeName = (type) => type.replace("_", " ");

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

// An entry that opens a memory in the detail panel: reachable with Tab, a button to assistive
// technology (named by what it holds), opened by a click, Enter or Space.
function openable(node, id, name) {
  node.dataset.id = id;
  node.tabIndex = 0;
  node.setAttribute("role", "button");
  node.setAttribute("aria-label", name.length > 160 ? name.slice(0, 159) + "…" : name);
  node.addEventListener("click", () => openDetail(id));
  node.addEventListener("keydown", (ev) => {
    if (ev.key !== "Enter" && ev.key !== " ") return;
    ev.preventDefault();
    openDetail(id);
  });
  if (state.selected === id) node.classList.add("selected");
}

function itemNode(m, score) {
  const li = el("li", "item t-" + m.memory_type);
  const meta = el("div", "meta");
  meta.append(el("span", "badge b-" + m.memory_type, typeName(m.memory_type)));
  meta.append(el("span", "when", when(m.occurred_at || m.created_at)));
  if (score !== undefined) meta.append(el("span", "score", "score " + score.toFixed(3)));
  meta.append(el("span", "id", m.id));
  li.append(meta, el("div", "text", summary(m)));
  openable(li, m.id, typeName(m.memory_type) + ", " + when(m.occurred_at || m.created_at) + ": " + summary(m));
  return li;
}

function showPanel(which) {
  for (const id of ["items", "timeline", "core", "inputs", "screen"]) $(id).hidden = which !== id;
  $("more-btn").hidden = true;
}

function clearPanels() {
  for (const id of ["items", "timeline", "core", "screen-list", "input-list", "chat-cited"]) $(id).replaceChildren();
  $("chat-answer").hidden = true;
  $("more-btn").hidden = true;
  $("retry-btn").hidden = true;
}

function activateTab(tab) {
  state.tab = tab;
  for (const b of document.querySelectorAll("#tabs button")) {
    b.classList.toggle("active", b.dataset.tab === tab);
    b.setAttribute("aria-selected", String(b.dataset.tab === tab));
  }
}

async function loadCounts() {
  const t = ticket("counts");
  const stats = await api("GET", userPath() + "/stats");
  if (!isCurrent(t)) return;
  state.counts = stats.memories || {};
  $("mode").textContent = "mode: " + stats.mode + " · " + stats.database + " · " + stats.search;
  for (const type of TYPES) {
    const b = $("tab-" + type);
    let c = b.querySelector(".count");
    if (!c) { c = el("span", "count"); b.append(c); }
    c.textContent = "(" + (state.counts[type] || 0) + ")";
  }
}

// Open a tab: its loader renders the panel and returns the status line (null: the reply was
// dropped). `done` (what an edit just did) is said instead once the list is back. A failed load
// leaves the earlier tab marked, as its list is what the panel still shows.
async function showTab(tab, done) {
  if (!state.user) return;
  const shownBefore = state.tab;
  activateTab(tab);
  const t = ticket("list");
  try {
    const line = await loadTab(tab, t);
    if (line !== null) setStatus(done || line);
  } catch (e) {
    if (!isCurrent(t)) return;
    activateTab(shownBefore);
    setStatus((done ? done + " " : "") + e.message, true);
  }
}

function loadTab(tab, t) {
  if (tab === "core") return showCore(t);
  if (tab === "inputs") return showInputs(t);
  if (tab === "screen") return showScreen(t);
  if (tab === "search") return showResults(t);
  return showListed(tab, t);  // a memory type, or the timeline of episodes
}

// Memory lists (a type tab, the timeline) come a page at a time (GET .../memories); a page's
// X-Mirix-Next-Cursor, sent only when more follow, is where "Show more" goes on (`before`), as it
// is for the input log, so memories written or deleted meanwhile shift nothing.
const listType = (tab) => (tab === "timeline" ? "episodic" : tab);
const pageSize = (tab) => (tab === "timeline" ? 500 : 200);

async function fetchPage(tab, before) {
  const after = before ? "&before=" + encodeURIComponent(before) : "";
  const res = await send("GET", userPath() + "/memories?memory_type=" + listType(tab) + "&limit=" +
                                pageSize(tab) + after);
  return { rows: await res.json(), next: res.headers.get("X-Mirix-Next-Cursor") };
}

async function showListed(tab, t) {
  const page = await fetchPage(tab, null);
  if (!isCurrent(t)) return null;
  state.listed = [];
  return addPage(tab, page);
}

async function showMore() {
  const tab = state.tab;
  const t = ticket("list");
  $("more-btn").disabled = true;
  try {
    const line = await (tab === "inputs" ? moreInputs(t) : moreListed(tab, t));
    if (line !== null) setStatus(line);
  } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
  finally { $("more-btn").disabled = false; }
}

async function moreListed(tab, t) {
  const page = await fetchPage(tab, state.next);
  return isCurrent(t) ? addPage(tab, page) : null;
}

// A page joins the list; one listed already (a memory whose time was edited between pages moved
// past the cursor) is not listed twice.
function appendPage(page) {
  const seen = new Set(state.listed.map((r) => r.id));
  state.listed.push(...page.filter((r) => !seen.has(r.id)));
}

function addPage(tab, page) {
  appendPage(page.rows);
  state.next = page.next;
  state.more = !!page.next;
  const days = tab === "timeline" ? renderTimeline() : renderType(tab);
  $("more-btn").hidden = !state.more;
  return listedStatus(tab, days);
}

function listedStatus(tab, days) {
  const shown = state.listed.length;
  const total = Math.max(state.counts[listType(tab)] || 0, shown);
  const what = (tab === "timeline" ? "episodes" : typeName(tab) + " memories") + " of " + state.user;
  const over = tab === "timeline" ? " over " + days + " day(s)" : "";
  if (!state.more) return shown + " " + what + over + ".";
  return shown + " of " + total + " " + what + " shown" + over + "; Show more lists the next " + pageSize(tab) + ".";
}

function renderType(type) {
  const ul = $("items");
  ul.replaceChildren(...state.listed.map((m) => itemNode(m)));
  if (!state.listed.length) ul.append(el("li", "empty", "No " + typeName(type) + " memories."));
  showPanel("items");
}

function renderTimeline() {
  const box = $("timeline");
  box.replaceChildren();
  const days = new Map();
  for (const m of state.listed) {
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
  if (!state.listed.length) box.append(el("div", "empty", "No episodes yet."));
  showPanel("timeline");
  return days.size;
}

// The input log: what came in (text, messages, screenshots with their app and window), its status,
// and why it failed or was degraded; failed and degraded inputs can be run again. It comes newest
// first a page at a time (GET .../inputs); a page's X-Mirix-Next-Cursor, sent only when older inputs
// exist, is where "Show more" goes on (`before`), so inputs logged meanwhile shift nothing.
const INPUTS_PAGE = 200;

async function fetchInputs(before) {
  const after = before ? "&before=" + encodeURIComponent(before) : "";
  const res = await send("GET", userPath() + "/inputs?limit=" + INPUTS_PAGE + after);
  return { rows: await res.json(), next: res.headers.get("X-Mirix-Next-Cursor") };
}

async function showInputs(t) {
  const page = await fetchInputs(null);
  if (!isCurrent(t)) return null;
  state.listed = [];
  return addInputs(page, t);
}

async function moreInputs(t) {
  const page = await fetchInputs(state.next);
  return isCurrent(t) ? addInputs(page, t) : null;
}

function addInputs(page, t) {
  appendPage(page.rows);
  state.next = page.next;
  state.more = !!page.next;
  const ul = $("input-list");
  ul.replaceChildren(...state.listed.map((i) => inputNode(i, t)));
  if (!state.listed.length) ul.append(el("li", "empty", "No inputs."));
  $("retry-btn").hidden = !state.listed.some((i) => i.status === "failed" || i.status === "degraded");
  showPanel("inputs");
  $("more-btn").hidden = !state.more;
  const shown = state.listed.length;
  return state.more ? "The newest " + shown + " inputs of " + state.user + " shown; Show more lists the next " +
                      INPUTS_PAGE + "."
                    : shown + " input(s) of " + state.user + ".";
}

function inputNode(i, t) {
  const li = el("li", "input s-" + i.status);
  li.dataset.id = i.id;
  const meta = el("div", "meta");
  meta.append(el("span", "badge status", i.status), el("span", "when", when(i.occurred_at)),
              el("span", "kind", i.kind), el("span", "id", i.id));
  li.append(meta);
  const md = i.metadata || {};
  if (md.app || md.window_title) li.append(el("div", "text", [md.app, md.window_title].filter(Boolean).join(" · ")));
  if (md.thumbnail) li.append(thumbnailNode(i.id, t));
  if (i.error) li.append(el("div", "error", i.error));
  return li;
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

async function showScreen(t) {
  const groups = await api("GET", userPath() + "/screen-activity?limit=100");
  if (!isCurrent(t)) return null;
  const ul = $("screen-list");
  ul.replaceChildren(...groups.map((g) => screenGroupNode(g, t)));
  if (!groups.length) ul.append(el("li", "empty", "No screenshots yet (mirix capture, or POST .../screenshots)."));
  showPanel("screen");
  const frames = groups.reduce((n, g) => n + g.frames, 0);
  return groups.length + " screen group(s), " + frames + " frame(s) of " + state.user + ".";
}

function screenGroupNode(g, t) {
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
    thumbs.append(...spread(g.thumbnail_ids, SCREEN_THUMBS).map((id) => thumbnailNode(id, t)));
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
  return li;
}

// A screenshot input's kept thumbnail. An <img src> cannot send the API key, so the image is
// fetched with it and shown from a blob: URL; an expired one (404) leaves no image.
function thumbnailNode(inputId, t) {
  const img = el("img", "thumb");
  img.alt = "screen at this time";
  img.hidden = true;
  fetch(userPath() + "/inputs/" + encodeURIComponent(inputId) + "/thumbnail", { headers: authHeaders() })
    .then((res) => (res.ok && isCurrent(t) ? res.blob() : null))
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
  const t = ticket("retry");
  $("retry-btn").disabled = true;
  try {
    const results = await api("POST", userPath() + "/inputs/retry");
    if (!isCurrent(t)) return;
    await refresh("Retried " + results.length + " input(s): " + results.map((r) => r.status).join(", ") + ".");
  } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
  finally { $("retry-btn").disabled = false; }
}

async function showCore(t) {
  const blocks = await api("GET", userPath() + "/core");
  if (!isCurrent(t)) return null;
  const box = $("core");
  box.replaceChildren();
  for (const label of ["persona", "human"]) {
    const b = blocks[label];
    const div = el("div", "block");
    div.append(el("h4", null, label + " (" + (b.value || "").length + "/" + b.limit + " chars)"));
    div.append(el("div", "text", b.value || "(empty)"));
    if (b.id) { div.classList.add("item"); openable(div, b.id, "core block " + label + ": " + (b.value || "empty")); }
    box.append(div);
  }
  showPanel("core");
  return "Core memory of " + state.user + ".";
}

// The Results tab runs the search again each time it is shown, so after an edit or a delete it
// lists what the memories hold now.
async function showResults(t) {
  const { query, method } = state.search;
  const hits = await api("POST", userPath() + "/search", { query, limit: 25, method });
  if (!isCurrent(t)) return null;
  $("tab-search").hidden = false;
  const ul = $("items");
  ul.replaceChildren(...hits.map((h) => itemNode(h.memory, h.score)));
  if (!hits.length) ul.append(el("li", "empty", "No matches."));
  showPanel("items");
  return hits.length + " result(s) for “" + query + "”.";
}

function search(ev) {
  ev.preventDefault();
  const query = $("search-input").value.trim();
  if (!query || !state.user) return;
  state.search = { query, method: $("search-method").value };
  showTab("search");
}

function editable(m) {
  const out = {};
  for (const [k, v] of Object.entries(m)) if (!FIXED.has(k)) out[k] = v;
  return out;
}

// The memory and its history are fetched together and shown at once, if still wanted.
async function openDetail(id) {
  const t = ticket("detail");
  try {
    const [m, events] = await Promise.all([api("GET", memoryPath(id)), api("GET", memoryPath(id) + "/history")]);
    if (isCurrent(t)) showDetail(m, events);
  } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
}

function showDetail(m, events) {
  state.selected = m.id;
  state.current = m;
  for (const node of document.querySelectorAll(".item")) node.classList.toggle("selected", node.dataset.id === m.id);
  $("detail").hidden = false;
  $("detail-title").textContent = typeName(m.memory_type) + " · " + m.id;
  const dl = $("detail-meta");
  dl.replaceChildren();
  for (const k of ["created_at", "updated_at", "occurred_at", "source_ids"]) {
    dl.append(el("dt", null, k), el("dd", null, Array.isArray(m[k]) ? m[k].join(", ") || "—" : (m[k] || "—")));
  }
  $("edit-fields").value = JSON.stringify(editable(m), null, 2);
  disarm($("delete-btn"), "Delete");
  $("history").replaceChildren(...events.map(historyNode));
}

function historyNode(e) {
  const li = el("li", "event-" + e.operation);
  li.append(el("span", "op", e.operation), document.createTextNode(" by " + e.actor + " at " + when(e.created_at)));
  if (e.input_id) {
    li.append(document.createTextNode(" (input " + e.input_id + ")"));
    // take back everything that input did (POST .../inputs/{id}/undo), with a second click to confirm
    const undo = el("button", "undo-input", "Undo input");
    undo.type = "button";
    undo.dataset.input = e.input_id;
    undo.addEventListener("click", (ev) => undoInput(undo, ev));
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
  return li;
}

// The edit box as the fields to send (PATCH changes only the keys it is sent), or why it cannot be
// saved: it must be one JSON object, and a key taken out of it would change nothing, so the message
// says what to set instead.
function fieldsToSave(text, m) {
  let fields;
  try { fields = JSON.parse(text); } catch (e) { return { error: "The fields are not valid JSON: " + e.message }; }
  if (fields === null || typeof fields !== "object" || Array.isArray(fields)) {
    return { error: "The fields must be one JSON object, like {\"summary\": \"…\"}, not " + jsonKind(fields) + "." };
  }
  const before = editable(m);
  const removed = Object.keys(before).filter((k) => !(k in fields) && !isEmpty(before[k]));
  if (removed.length) {
    return { error: "Taking a key out does not clear it: set " +
                    removed.map((k) => "\"" + k + "\" to " + emptyFor(before[k])).join(", ") + " instead." };
  }
  const changed = {};
  for (const [k, v] of Object.entries(fields)) if (JSON.stringify(before[k]) !== JSON.stringify(v)) changed[k] = v;
  return { changed };
}

function jsonKind(v) {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  return { string: "a string", number: "a number", boolean: "true or false" }[typeof v] || typeof v;
}

function isEmpty(v) {
  return v === null || v === "" || (Array.isArray(v) && !v.length) ||
         (typeof v === "object" && !Object.keys(v).length);
}

function emptyFor(v) {
  if (Array.isArray(v)) return "[]";
  if (v && typeof v === "object") return "{}";
  return typeof v === "string" && !ISO_TIME.test(v) ? "\"\"" : "null";
}

// Save and Delete are off while their request runs, so a double-click sends one request.
const DETAIL_ACTIONS = ["save-btn", "delete-btn"];

async function whileBusy(ids, work) {
  for (const id of ids) $(id).disabled = true;
  try { return await work(); } finally { for (const id of ids) $(id).disabled = false; }
}

async function save() {
  const m = state.current;
  if (!m) return;
  const { error, changed } = fieldsToSave($("edit-fields").value, m);
  if (error) return setStatus(error, true);
  if (!Object.keys(changed).length) return setStatus("Nothing changed.");
  const t = ticket("edit");
  await whileBusy(DETAIL_ACTIONS, async () => {
    try {
      await api("PATCH", memoryPath(m.id), { fields: changed });
      if (!isCurrent(t)) return;
      if (state.selected === m.id) await openDetail(m.id);
      await refresh("Saved " + Object.keys(changed).join(", ") + " of " + m.id + ".");
    } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
  });
}

// A destructive button takes two deliberate clicks: the first arms it (`question`), and only a
// separate click a moment later confirms, so the two clicks of one double-click never do both.
function confirmed(button, ev, question) {
  if (button.dataset.armed === "ready" && ev.detail <= 1) return true;
  if (!button.dataset.armed) arm(button, question);
  return false;
}

function arm(button, question) {
  button.dataset.armed = "soon";
  button.setAttribute("aria-disabled", "true");
  button.textContent = question;
  setTimeout(() => {
    if (button.dataset.armed !== "soon") return;
    button.dataset.armed = "ready";
    button.removeAttribute("aria-disabled");
  }, CONFIRM_AFTER_MS);
}

function disarm(button, text) {
  button.dataset.armed = "";
  button.removeAttribute("aria-disabled");
  button.textContent = text;
}

// "Undo input", and "Undo anyway" once the server refused because the input's memories were changed
// later (error `later_changes`): the same undo with force=true, which overwrites those changes too.
// Each asks for its own separate confirming click.
async function undoInput(button, ev) {
  const force = button.dataset.force === "true";
  if (!confirmed(button, ev, force ? "Really undo anyway?" : "Really undo?")) return;
  const input = button.dataset.input;
  const t = ticket("edit");
  button.disabled = true;
  try {
    const changes = await api("POST", userPath() + "/inputs/" + encodeURIComponent(input) + "/undo" +
                                      (force ? "?force=true" : ""));
    if (!isCurrent(t)) return;
    const id = state.selected;
    const gone = changes.some((c) => c.memory_id === id && c.operation === "delete");
    if (gone || !id) closeDetail(); else await openDetail(id);
    await refresh("Undid input " + input + (force ? " over the later changes" : "") + ": " + changes.length +
                  " change(s).");
  } catch (e) {
    const changedLater = !force && e.code === "later_changes";
    if (changedLater) { button.dataset.force = "true"; button.classList.add("danger"); }
    disarm(button, button.dataset.force ? "Undo anyway" : "Undo input");
    if (isCurrent(t)) setStatus(e.message + (changedLater ? " “Undo anyway” overwrites those later changes too." : ""), true);
  } finally { button.disabled = false; }
}

async function remove(ev) {
  const m = state.current;
  if (!m || !confirmed($("delete-btn"), ev, "Really delete?")) return;
  const t = ticket("edit");
  await whileBusy(DETAIL_ACTIONS, async () => {
    try {
      const changes = await api("DELETE", memoryPath(m.id));
      if (!isCurrent(t)) return;
      if (state.selected === m.id) closeDetail();
      const also = (changes || []).filter((c) => c.memory_id !== m.id).length;
      await refresh("Deleted " + m.id + (also ? "; took back " + also + (also === 1 ? " memory" : " memories") +
                                         " said only in it." : "."));
    } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
  });
}

function closeDetail() {
  ticket("detail");  // a detail still loading is no longer wanted
  $("detail").hidden = true;
  state.selected = null;
  state.current = null;
}

// The counts and the open tab again; `done` is the status line once the list is back. A failed
// count is left to the list load, which meets the same server and says what went wrong.
async function refresh(done) {
  const t = ticket("refresh");
  try { await loadCounts(); } catch (e) { /* reported by showTab */ }
  if (isCurrent(t)) await showTab(state.tab, done);
}

async function openUser(user) {
  if (!user) return;
  state.user = user;
  // the picker shows the user now open, one typed in too (added to the list for this page)
  const select = $("user-select");
  if (![...select.options].some((o) => o.value === user)) select.append(new Option(user, user));
  select.value = user;
  closeDetail();
  clearPanels();
  state.search = null;
  $("tab-search").hidden = true;
  if (state.tab === "search") state.tab = "episodic";
  for (const id of USER_CONTROLS) $(id).disabled = false;
  await refresh();
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
  const t = ticket("chat");
  $("chat-send").disabled = true;
  setStatus("Asking…");
  try {
    const r = await api("POST", userPath() + "/chat", { message, remember: $("chat-remember").checked });
    const cited = [];
    for (const id of r.memory_ids) {
      try { cited.push(await api("GET", memoryPath(id))); } catch (e) { /* gone */ }
    }
    if (!isCurrent(t)) return;
    showAnswer(r, cited);
    setStatus("Answered with " + cited.length + " cited memor" + (cited.length === 1 ? "y" : "ies") +
              (r.update_input_ids.length ? "; the exchange is being remembered." : "."));
  } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
  finally { $("chat-send").disabled = !state.user; }
}

function showAnswer(r, cited) {
  $("chat-answer").hidden = false;
  $("chat-text").textContent = r.answer;
  $("chat-mode").textContent = r.mode === "offline"
    ? "Offline: no model is configured, so these are the memories that match, cited."
    : (r.fallback ? "The model gave no usable answer (" + r.fallback + "); the best memories instead."
                  : "Answered by the model from the memories cited.");
  $("chat-cited").replaceChildren(...cited.map((m) => itemNode(m)));
}

async function addMemory(ev) {
  ev.preventDefault();
  const content = $("add-input").value.trim();
  if (!content || !state.user) return;
  const t = ticket("add");
  $("add-btn").disabled = true;
  try {
    const r = await api("POST", userPath() + "/memories", { content, wait: true });
    $("add-input").value = "";
    if (isCurrent(t)) await refresh("Remembered (" + r.status + ", " + r.mode + "): " + r.changes.length + " change(s).");
  } catch (e) { if (isCurrent(t)) setStatus(e.message, true); }
  finally { $("add-btn").disabled = !state.user; }
}

// Each connect attempt gets a number; only the latest may change the page, so a slow answer for an
// earlier key (the automatic reconnect on load, say) can never unlock the page after a rejection.
let connectAttempt = 0;

function lockPage() {
  state.user = null;
  closeDetail();
  clearPanels();
  $("user-select").replaceChildren();
  $("tab-search").hidden = true;
  for (const id of ["user-select", "user-input", "user-open", ...USER_CONTROLS]) $(id).disabled = true;
}

// Connect with the key typed (or kept for this tab), or with none: a --no-auth server answers
// without one, so the page also tries that on load.
async function connect(ev) {
  if (ev) ev.preventDefault();
  state.key = $("api-key").value.trim() || state.key;
  const attempt = ++connectAttempt;
  try {
    const res = await api("GET", "/v1/users");
    if (attempt !== connectAttempt) return;
    if (state.key) sessionStorage.setItem("mirix.key", state.key);
    const sel = $("user-select");
    sel.replaceChildren(...res.users.map((u) => { const o = el("option", null, u); o.value = u; return o; }));
    sel.disabled = !res.users.length;
    $("user-input").disabled = !res.all_users;
    $("user-open").disabled = false;
    setStatus("Connected" + (state.key ? "" : " (this server needs no key)") + ": " + res.users.length + " user(s)" +
              (res.all_users ? " with data (" + (state.key ? "this key" : "you") + " may open any user)." : "."));
    if (res.users.length) await openUser(res.users[0]);
  } catch (e) {
    if (attempt !== connectAttempt) return;
    if (e.status === 401) return refused(!!ev);
    setStatus(e.message, true);
  }
}

function refused(asked) {
  const hadKey = !!state.key;
  sessionStorage.removeItem("mirix.key");
  state.key = "";
  lockPage();
  if (hadKey) setStatus("That key is not valid.", true);
  else setStatus(asked ? "This server needs an API key: enter one." : "Enter an API key to start.", asked);
}

document.addEventListener("DOMContentLoaded", () => {
  $("connect-form").addEventListener("submit", connect);
  $("user-select").addEventListener("change", (e) => openUser(e.target.value));
  $("user-form").addEventListener("submit", (e) => { e.preventDefault(); openUser($("user-input").value.trim() || $("user-select").value); });
  $("search-form").addEventListener("submit", search);
  $("chat-form").addEventListener("submit", ask);
  $("add-form").addEventListener("submit", addMemory);
  $("retry-btn").addEventListener("click", retryInputs);
  $("more-btn").addEventListener("click", showMore);
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showTab(b.dataset.tab));
  $("save-btn").addEventListener("click", save);
  $("delete-btn").addEventListener("click", remove);
  $("close-btn").addEventListener("click", closeDetail);
  activateTab(state.tab);
  if (state.key) $("api-key").value = state.key;
  connect();
});
