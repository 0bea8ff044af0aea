// memstrata Web UI: plain ES modules, no build step, no third-party code.
// Every value from the server is rendered with textContent (never innerHTML).

import {
  $, KEY_STORAGE, KINDS, PAGE, api, confirmAction, describe, el, emptyRow, fmtDate, isSuperseded, showStatus, state, userPath,
} from "./core.js";
import { SCREENS, wireScreens } from "./screens.js";

// -- who am I ---------------------------------------------------------------
async function connect() {
  try {
    state.me = await api("GET", "/v1/whoami");
  } catch (error) {
    state.me = null;
    $("whoami").textContent = "";
    $("user-bar").hidden = true;
    $("workspace").hidden = true;
    showStatus(authMessage(error), Boolean(state.key) || error.status !== 401);
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
    $("workspace").hidden = false;
    if (!state.user) selectTab("users");
  }
  document.querySelector('[data-tab="users"]').hidden = !me.admin;
}

function authMessage(error) {
  if (error.status === 401 && !state.key) return "Enter an API key to continue.";
  if (error.status === 401) {
    return `This API key was not accepted (${error.message}). Check that it was copied whole and is not revoked; create one with: memstrata keys create --user <id>`;
  }
  if (error.status === 403) return `This API key may not do that (${error.message}).`;
  return `Error: ${error.message}`;
}

async function loadKnownUsers() {
  const list = $("known-users");
  list.replaceChildren();
  const page = await api("GET", "/v1/users?limit=500");
  for (const user of page.items) list.append(el("option", { value: user }));
}

async function openUser(user) {
  state.user = user;
  $("receipt").hidden = true;
  if (currentTab() === "users") selectTab("memories", false);
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
  if (!state.user && !["users", "metrics"].includes(tab)) return;
  try {
    if (tab === "memories") await loadMemories(true);
    if (tab === "profile") await loadProfile();
    if (SCREENS[tab]) await SCREENS[tab]({ openUser });
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

function selectTab(tab, refresh = true) {
  for (const button of document.querySelectorAll(".tabs button")) {
    button.setAttribute("aria-selected", String(button.dataset.tab === tab));
  }
  for (const section of document.querySelectorAll(".tab")) section.hidden = section.id !== `tab-${tab}`;
  if (refresh) refreshTab(tab);
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
    el("button", { type: "button", class: "edit", text: "Edit", onclick: () => editMemory(memory) }),
    " ",
    el("button", { type: "button", class: "danger forget", text: "Forget", onclick: () => forget(row, memory) }),
  );
  const pick = el("input", { type: "checkbox", class: "pick", "aria-label": "select", value: memory.id });
  row.append(
    el("td", {}, pick),
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
  if ($("filter-kind").value) params.append("kinds", $("filter-kind").value);
  if ($("filter-agent").value.trim()) params.set("agent_id", $("filter-agent").value.trim());
  if ($("filter-after").value) params.set("created_after", new Date($("filter-after").value).toISOString());
  if ($("filter-before").value) params.set("created_before", new Date(`${$("filter-before").value}T23:59:59`).toISOString());
  if ($("filter-superseded").checked) params.set("include_superseded", "true");
  if ($("filter-expired").checked) params.set("include_expired", "true");
  const page = await api("GET", userPath(`/memories?${params}`));
  const body = $("memories").tBodies[0];
  const text = $("filter-text").value.trim().toLowerCase();
  for (const memory of page.memories) {
    if (!text || memory.content.toLowerCase().includes(text)) body.append(memoryRow(memory));
  }
  emptyRow(body, 7, "No memories.");
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
  row.after(el("tr", { class: "history" }, el("td", { colspan: "7" }, list)));
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

async function editMemory(memory) {
  const dialog = $("edit-dialog");
  $("edit-content").value = memory.content;
  $("edit-importance").value = String(memory.importance);
  $("edit-pinned").checked = memory.pinned;
  const saved = await new Promise((resolve) => {
    dialog.addEventListener("close", () => resolve(dialog.returnValue === "save"), { once: true });
    dialog.showModal();
  });
  if (!saved) return;
  try {
    await api("PATCH", userPath(`/memories/${encodeURIComponent(memory.id)}`), {
      content: $("edit-content").value,
      importance: Number($("edit-importance").value),
      pinned: $("edit-pinned").checked,
    });
    await loadMemories(true);
    showStatus("Memory updated (its history keeps the old text).");
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

async function forgetSelected() {
  const ids = [...document.querySelectorAll("#memories input.pick:checked")].map((box) => box.value);
  if (!ids.length) {
    showStatus("Select memories to forget first.");
    return;
  }
  const ok = await confirmAction({
    title: `Forget ${ids.length} memories?`,
    text: "They will be deleted and their text scrubbed from history.",
  });
  if (!ok) return;
  try {
    for (const id of ids) await api("DELETE", userPath(`/memories/${encodeURIComponent(id)}`));
    await loadMemories(true);
    showStatus(`${ids.length} memories forgotten.`);
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
      const replaced = isSuperseded(hit.memory);
      const content = el("td", { class: "content", text: hit.memory.content });
      if (replaced) content.prepend(el("span", { class: "tag superseded", text: "superseded" }), " ");
      body.append(
        el(
          "tr",
          { "data-id": hit.memory.id, class: replaced ? "superseded" : "current" },
          el("td", { text: String(index + 1) }),
          content,
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

// -- profile ----------------------------------------------------------------
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
    await openUser(user);
    showStatus(`User ${user} erased.`);
    showReceipt(receipt);
    if (state.me && state.me.admin) await loadKnownUsers();
  } catch (error) {
    showStatus(`Error: ${error.message}`, true);
  }
}

function showReceipt(receipt) {
  const box = $("receipt");
  const removed = Object.entries(receipt.counts).filter(([, n]) => n).map(([layer, n]) => `${layer} ${n}`);
  const rows = [
    ["request id", receipt.request_id],
    ["erased at", fmtDate(receipt.erased_at)],
    ["removed", removed.join(", ") || "nothing was stored"],
    ["took", `${receipt.duration_ms.toFixed(0)} ms`],
    ["user hash", `${receipt.algorithm}: ${receipt.user_hash}`],
    ["salt", receipt.salt],
  ];
  const list = el("dl", { class: "context" });
  for (const [name, value] of rows) list.append(el("dt", { text: name }), el("dd", { text: value }));
  box.replaceChildren(
    el("h2", { class: "section", text: "Erasure receipt (keep it: it proves the erasure and holds no personal data)" }),
    list,
  );
  box.hidden = false;
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
  $("forget-selected").addEventListener("click", forgetSelected);
  $("pick-all").addEventListener("change", (event) => {
    for (const box of document.querySelectorAll("#memories input.pick")) box.checked = event.target.checked;
  });
  $("search-form").addEventListener("submit", search);
  $("erase-user").addEventListener("click", eraseUser);
  wireScreens();
  $("export-user").addEventListener("click", exportUser);
  connect();
}

init();
