// memstrata Web UI: plain ES module, no build step, no third-party code.
// Every value from the server is rendered with textContent (never innerHTML).

const KINDS = ["fact", "preference", "event", "note", "task", "episode", "summary", "procedure"];
const PAGE = 50;
const KEY_STORAGE = "memstrata.key";

const state = { key: sessionStorage.getItem(KEY_STORAGE) || "", me: null, user: null, offset: 0 };

const $ = (id) => document.getElementById(id);

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function showStatus(message, isError = false) {
  const box = $("status");
  box.textContent = message;
  box.classList.toggle("error", isError);
  box.hidden = !message;
}

class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

async function api(method, path, body) {
  const headers = { Accept: "application/json" };
  if (state.key) headers.Authorization = `Bearer ${state.key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (response.headers.get("X-Memstrata-Auth")) $("insecure-banner").hidden = false;
  if (response.status === 204) return null;
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new ApiError(response.status, (data && data.detail) || response.statusText);
  return data;
}

const userPath = (suffix = "") => `/v1/users/${encodeURIComponent(state.user)}${suffix}`;
const fmtDate = (iso) => (iso ? new Date(iso).toLocaleString() : "");

function confirmAction({ title, text, typed }) {
  const dialog = $("confirm-dialog");
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-typed").hidden = !typed;
  $("confirm-expected").textContent = typed || "";
  $("confirm-input").value = "";
  return new Promise((resolve) => {
    dialog.addEventListener(
      "close",
      () => resolve(dialog.returnValue === "ok" && (!typed || $("confirm-input").value === typed)),
      { once: true },
    );
    dialog.showModal();
  });
}

// -- who am I ---------------------------------------------------------------
async function connect() {
  try {
    state.me = await api("GET", "/v1/whoami");
  } catch (error) {
    state.me = null;
    $("whoami").textContent = "";
    $("user-bar").hidden = true;
    $("workspace").hidden = true;
    showStatus(error.status === 401 ? "Enter an API key to continue." : `Error: ${error.message}`, error.status !== 401);
    return;
  }
  const me = state.me;
  $("insecure-banner").hidden = me.auth;
  $("whoami").textContent = `tenant ${me.tenant} · ${me.admin ? "admin key" : `key for user ${me.user}`}`;
  $("user-bar").hidden = false;
  showStatus("");
  if (!me.admin) {
    $("user-id").value = me.user;
    $("user-id").readOnly = true;
    await openUser(me.user);
  } else {
    $("user-id").readOnly = false;
    await loadKnownUsers();
  }
}

async function loadKnownUsers() {
  const list = $("known-users");
  list.replaceChildren();
  const page = await api("GET", "/v1/users?limit=500");
  for (const user of page.items) list.append(el("option", { value: user }));
}

async function openUser(user) {
  state.user = user;
  $("current-user").textContent = user;
  $("current-user").hidden = false;
  $("erase-user").disabled = false;
  $("export-user").disabled = false;
  $("workspace").hidden = false;
  await refreshTab(currentTab());
}

// -- tabs -------------------------------------------------------------------
function currentTab() {
  return document.querySelector('.tabs [aria-selected="true"]').dataset.tab;
}

async function refreshTab(tab) {
  try {
    if (tab === "memories") await loadMemories(true);
    if (tab === "entities") await loadEntities();
    if (tab === "profile") await loadProfile();
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

function selectTab(tab) {
  for (const button of document.querySelectorAll(".tabs button")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  }
  for (const section of document.querySelectorAll(".tab")) section.hidden = section.id !== `tab-${tab}`;
  refreshTab(tab);
}

// -- memories ---------------------------------------------------------------
function validity(memory) {
  const now = Date.now();
  if (memory.valid_to && Date.parse(memory.valid_to) <= now) return "superseded";
  if (memory.expires_at && Date.parse(memory.expires_at) <= now) return "expired";
  return "current";
}

function validityCell(memory) {
  const status = validity(memory);
  const cell = el("td", {}, el("span", { class: `tag ${status}`, text: status }));
  const range = `${fmtDate(memory.valid_from)} → ${memory.valid_to ? fmtDate(memory.valid_to) : "now"}`;
  cell.append(el("div", { class: "muted", text: range }));
  if (memory.expires_at) cell.append(el("div", { class: "muted", text: `expires ${fmtDate(memory.expires_at)}` }));
  return cell;
}

function provenanceCell(memory) {
  const cell = el("td");
  if (memory.source_ids.length) cell.append(el("div", { text: `from ${memory.source_ids.join(", ")}` }));
  if (memory.superseded_by) cell.append(el("div", { text: `superseded by ${memory.superseded_by}` }));
  if (memory.session_id) cell.append(el("div", { class: "muted", text: `session ${memory.session_id}` }));
  if (memory.agent_id) cell.append(el("div", { class: "muted", text: `agent ${memory.agent_id}` }));
  cell.append(el("div", { class: "muted", text: `accessed ${memory.access_count}×` }));
  return cell;
}

function memoryRow(memory) {
  const row = el("tr", { class: validity(memory), "data-id": memory.id });
  const actions = el(
    "td",
    { class: "actions" },
    el("button", { type: "button", text: "History", onclick: () => toggleHistory(row, memory) }),
    " ",
    el("button", { type: "button", class: "danger forget", text: "Forget", onclick: () => forget(row, memory) }),
  );
  row.append(
    el("td", { class: "content", text: memory.content }),
    el("td", { text: memory.kind }),
    validityCell(memory),
    provenanceCell(memory),
    el("td", { text: fmtDate(memory.created_at) }),
    actions,
  );
  return row;
}

async function loadMemories(reset) {
  if (reset) {
    state.offset = 0;
    $("memories").tBodies[0].replaceChildren();
  }
  const params = new URLSearchParams({ limit: String(PAGE), offset: String(state.offset) });
  if ($("filter-kind").value) params.append("kind", $("filter-kind").value);
  if ($("filter-superseded").checked) params.set("include_superseded", "true");
  if ($("filter-expired").checked) params.set("include_expired", "true");
  const page = await api("GET", userPath(`/memories?${params}`));
  const body = $("memories").tBodies[0];
  for (const memory of page.items) body.append(memoryRow(memory));
  if (!body.rows.length) body.append(el("tr", {}, el("td", { colspan: "6", class: "muted", text: "No memories." })));
  state.offset = page.next_offset ?? state.offset;
  $("more-memories").hidden = page.next_offset === null;
}

async function toggleHistory(row, memory) {
  const next = row.nextElementSibling;
  if (next && next.classList.contains("history")) {
    next.remove();
    return;
  }
  const events = await api("GET", userPath(`/memories/${encodeURIComponent(memory.id)}/history`));
  const list = el("ol");
  for (const event of events) {
    const change = event.before && event.after ? `${event.before} → ${event.after}` : event.after || event.before || "";
    list.append(el("li", { text: `${fmtDate(event.at)} ${event.event}${change ? `: ${change}` : ""}` }));
  }
  row.after(el("tr", { class: "history" }, el("td", { colspan: "6" }, list)));
}

async function forget(row, memory) {
  const ok = await confirmAction({
    title: "Forget this memory?",
    text: `"${memory.content}" will be deleted and its text scrubbed from history.`,
  });
  if (!ok) return;
  try {
    await api("DELETE", userPath(`/memories/${encodeURIComponent(memory.id)}`));
    const next = row.nextElementSibling;
    if (next && next.classList.contains("history")) next.remove();
    row.remove();
    showStatus("Memory forgotten.");
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

async function addMemory(event) {
  event.preventDefault();
  try {
    await api("POST", userPath("/memories"), { content: $("new-content").value, kind: $("new-kind").value });
    $("new-content").value = "";
    await loadMemories(true);
    showStatus("Memory added.");
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

// -- search -----------------------------------------------------------------
async function search(event) {
  event.preventDefault();
  const body = $("hits").tBodies[0];
  body.replaceChildren();
  try {
    const result = await api("POST", userPath("/search"), {
      query: $("search-query").value,
      strategy: $("search-strategy").value,
      k: Number($("search-k").value) || 10,
      filters: { include_superseded: $("search-superseded").checked },
    });
    result.hits.forEach((hit, index) => {
      const scores = el("td", { class: "scores" });
      for (const [name, value] of Object.entries(hit.scores)) {
        scores.append(el("span", { "data-component": name, text: `${name}=${value.toFixed(4)}` }));
      }
      body.append(
        el(
          "tr",
          { "data-id": hit.memory.id },
          el("td", { text: String(index + 1) }),
          el("td", { class: "content", text: hit.memory.content }),
          el("td", { text: hit.memory.kind }),
          el("td", { text: hit.score.toFixed(4) }),
          scores,
        ),
      );
    });
    if (!result.hits.length) body.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "No hits." })));
    showStatus("");
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

// -- entities and profile ---------------------------------------------------
async function loadEntities() {
  const { entities } = await api("GET", userPath("/entities"));
  const body = $("entities").tBodies[0];
  body.replaceChildren();
  for (const entity of entities) {
    body.append(
      el(
        "tr",
        {},
        el("td", { text: entity.name }),
        el("td", { text: entity.type }),
        el("td", { text: entity.summary }),
        el("td", { text: entity.aliases.join(", ") }),
        el("td", { class: "scores", text: JSON.stringify(entity.attributes) }),
        el("td", { text: String(entity.mention_count) }),
        el("td", { text: fmtDate(entity.last_seen) }),
      ),
    );
  }
  if (!entities.length) body.append(el("tr", {}, el("td", { colspan: "7", class: "muted", text: "No entities." })));
}

function describe(value) {
  if (Array.isArray(value)) return value.map(describe).join("; ") || "—";
  if (value && typeof value === "object") {
    return Object.entries(value).map(([k, v]) => `${k}: ${describe(v)}`).join("; ") || "—";
  }
  return value === null || value === undefined || value === "" ? "—" : String(value);
}

async function loadUserContext() {
  const box = $("user-context");
  box.replaceChildren();
  const context = await api("GET", userPath("/profile"));
  for (const [name, value] of Object.entries(context)) {
    if (name === "user_id") continue;
    box.append(el("dt", { text: name.replaceAll("_", " ") }), el("dd", { "data-field": name, text: describe(value) }));
  }
}

async function loadProfile() {
  await loadUserContext();
  const { facts } = await api("GET", userPath("/profile/facts"));
  const body = $("facts").tBodies[0];
  body.replaceChildren();
  for (const fact of facts) {
    body.append(
      el(
        "tr",
        {},
        el("td", { text: fact.category }),
        el("td", { text: fact.key }),
        el("td", { text: fact.value }),
        el("td", { text: fact.source || "" }),
        el("td", { text: fmtDate(fact.updated_at) }),
      ),
    );
  }
  if (!facts.length) body.append(el("tr", {}, el("td", { colspan: "5", class: "muted", text: "No profile facts." })));
}

// -- erase and export -------------------------------------------------------
async function eraseUser() {
  const user = state.user;
  const ok = await confirmAction({
    title: `Erase user ${user}?`,
    text: "Every memory, entity, profile fact, session and history event of this user will be removed. This cannot be undone.",
    typed: user,
  });
  if (!ok) {
    showStatus("Erase cancelled.");
    return;
  }
  try {
    const receipt = await api("DELETE", userPath());
    showStatus(`User ${user} erased. Receipt: ${JSON.stringify(receipt)}`);
    await openUser(user);
    if (state.me && state.me.admin) await loadKnownUsers();
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

async function exportUser() {
  try {
    const data = await api("GET", userPath("/export"));
    const blob = new Blob([JSON.stringify(data, null, 2)], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: `memstrata-${state.user}.json` });
    link.click();
    URL.revokeObjectURL(link.href);
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

// -- wiring -----------------------------------------------------------------
function init() {
  for (const kind of KINDS) {
    $("filter-kind").append(el("option", { value: kind, text: kind }));
    $("new-kind").append(el("option", { value: kind, text: kind }));
  }
  $("api-key").value = state.key;
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    state.key = $("api-key").value.trim();
    sessionStorage.setItem(KEY_STORAGE, state.key);
    connect();
  });
  $("user-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const user = $("user-id").value.trim();
    if (user) openUser(user);
  });
  for (const button of document.querySelectorAll(".tabs button")) {
    button.addEventListener("click", () => selectTab(button.dataset.tab));
  }
  $("memory-filters").addEventListener("submit", (event) => {
    event.preventDefault();
    refreshTab("memories");
  });
  $("more-memories").addEventListener("click", () => loadMemories(false));
  $("add-memory").addEventListener("submit", addMemory);
  $("search-form").addEventListener("submit", search);
  $("erase-user").addEventListener("click", eraseUser);
  $("export-user").addEventListener("click", exportUser);
  connect();
}

init();
