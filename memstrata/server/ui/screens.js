// The Web UI's screens beyond memories/search/profile: users overview, timeline, context, sessions,
// procedures, entities with their memories, metrics. Each loads when its tab is opened.

import { $, api, describe, el, emptyRow, fmtDate, PAGE, showStatus, userPath } from "./core.js";
import { drawTimeline } from "./timeline.js";

const COUNT_CAP = 500;

// -- users overview (admin keys) -------------------------------------------------
const ofUser = (user, path) => api("GET", `/v1/users/${encodeURIComponent(user)}${path}`);

async function loadUsers({ openUser }) {
  const body = $("users").tBodies[0];
  body.replaceChildren();
  const page = await api("GET", "/v1/users?limit=200");
  for (const user of page.items) {
    const [memories, entities] = await Promise.all([
      ofUser(user, `/memories?limit=${COUNT_CAP}`),
      ofUser(user, "/entities"),
    ]);
    const count = memories.next_offset === null ? String(memories.memories.length) : `${COUNT_CAP}+`;
    const newest = memories.memories.length ? fmtDate(memories.memories[0].created_at) : "—";
    body.append(el("tr", { "data-user": user },
      el("td", {}, el("button", { type: "button", class: "link", text: user, onclick: () => openUser(user) })),
      el("td", { class: "num", text: count }),
      el("td", { class: "num", text: String(entities.entities.length) }),
      el("td", { text: newest }),
    ));
  }
  emptyRow(body, 4, "No users with data yet.");
}

// -- timeline ------------------------------------------------------------------------
async function loadTimeline() {
  const params = new URLSearchParams({ limit: "200", include_superseded: "true" });
  for (const kind of ["fact", "preference", "event", "summary"]) params.append("kinds", kind);
  const page = await api("GET", userPath(`/memories?${params}`));
  const box = $("timeline");
  box.replaceChildren();
  if (!page.memories.length) {
    box.append(el("p", { class: "muted", text: "No memories to draw." }));
    return;
  }
  box.append(drawTimeline(page.memories, Math.max(box.clientWidth, 640)));
}

// -- context -------------------------------------------------------------------------
async function loadContext(event) {
  if (event) event.preventDefault();
  const body = { max_tokens: Number($("context-tokens").value) || 1000 };
  if ($("context-query").value.trim()) body.query = $("context-query").value.trim();
  if ($("context-session").value.trim()) body.session_id = $("context-session").value.trim();
  const context = await api("POST", userPath("/context"), body);
  $("context-text").textContent = context.text || "(empty: nothing stored for this user yet)";
  $("context-meta").textContent = `${context.tokens} of ${context.max_tokens} tokens`
    + (context.dropped.length ? ` · dropped: ${context.dropped.join(", ")}` : "");
  const parts = $("context-parts").tBodies[0];
  parts.replaceChildren();
  for (const part of context.parts) {
    parts.append(el("tr", {}, el("td", { text: part.name }), el("td", { class: "num", text: String(part.tokens) }),
      el("td", { class: "num", text: `${part.items} / ${part.total_items}` })));
  }
  emptyRow(parts, 3, "No parts.");
}

// -- sessions --------------------------------------------------------------------------
// One grouped query on the server (GET .../sessions): every session, however many episodes the user has.
let sessionOffset = 0;

async function loadSessions(more = false) {
  const list = $("session-list");
  if (!more) {
    sessionOffset = 0;
    list.replaceChildren();
  }
  const params = new URLSearchParams({ limit: String(PAGE), offset: String(sessionOffset) });
  const page = await api("GET", userPath(`/sessions?${params}`));
  for (const session of page.items) {
    list.append(el("li", {}, el("button", { type: "button", class: "link", "data-session": session.session_id,
      text: session.session_id, onclick: () => openSession(session.session_id) }),
      ` · ${session.episodes} episodes · last ${fmtDate(session.last_at)}`));
  }
  if (!list.children.length) list.append(el("li", { class: "muted", text: "No sessions yet." }));
  sessionOffset = page.next_offset ?? sessionOffset;
  $("more-sessions").hidden = page.next_offset === null;
}

async function openSession(id) {
  const session = await api("GET", userPath(`/sessions/${encodeURIComponent(id)}?n=50`));
  $("session-title").textContent = `Session ${id}`;
  $("session-summary").textContent = session.summary || "(no summary yet: the buffer still holds every turn)";
  const turns = $("session-turns");
  turns.replaceChildren();
  for (const turn of session.turns) {
    turns.append(el("li", { class: `turn ${turn.role}` }, el("span", { class: "muted", text: `${fmtDate(turn.at)} ${turn.role}` }),
      el("div", { text: turn.content })));
  }
  if (!session.turns.length) turns.append(el("li", { class: "muted", text: "The buffer is empty (ended or cleared); episodes stay searchable." }));
  $("session-detail").hidden = false;
}

// -- procedures ---------------------------------------------------------------------------
async function loadProcedures(event) {
  if (event) event.preventDefault();
  const task = $("procedure-task").value.trim() || "any task";
  const { procedures } = await api("GET", userPath(`/procedures?task=${encodeURIComponent(task)}&k=20`));
  const body = $("procedures").tBodies[0];
  body.replaceChildren();
  for (const p of procedures) {
    body.append(el("tr", {}, el("td", { text: p.task }), el("td", { text: p.type }), el("td", { class: "content", text: p.text })));
  }
  emptyRow(body, 3, "No procedures stored.");
}

// -- entities with their memories ------------------------------------------------------------
async function loadEntities() {
  const { entities } = await api("GET", userPath("/entities"));
  const body = $("entities").tBodies[0];
  body.replaceChildren();
  for (const entity of entities) {
    const row = el("tr", { "data-entity": entity.name },
      el("td", {}, el("button", { type: "button", class: "link", text: entity.name, onclick: () => entityMemories(row, entity) })),
      el("td", { text: entity.type }),
      el("td", { text: entity.summary }),
      el("td", { text: entity.aliases.join(", ") }),
      el("td", { class: "scores", text: describe(entity.attributes) }),
      el("td", { class: "num", text: String(entity.mention_count) }),
      el("td", { text: fmtDate(entity.last_seen) }),
    );
    body.append(row);
  }
  emptyRow(body, 7, "No entities.");
}

async function entityMemories(row, entity) {
  const next = row.nextElementSibling;
  if (next && next.classList.contains("history")) {
    next.remove();
    return;
  }
  const list = el("ul");
  for (const id of entity.memory_ids) {
    try {
      const memory = await api("GET", userPath(`/memories/${encodeURIComponent(id)}`));
      list.append(el("li", { text: `${fmtDate(memory.created_at)} [${memory.kind}] ${memory.content}` }));
    } catch (error) {
      if (error.status !== 404) throw error;
    }
  }
  if (!list.children.length) list.append(el("li", { class: "muted", text: "No stored memory mentions it any more." }));
  row.after(el("tr", { class: "history" }, el("td", { colspan: "7" }, list)));
}

// -- metrics ------------------------------------------------------------------------------------
export function parseMetrics(text) {
  const rows = [];
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const match = line.match(/^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)$/);
    if (match && match[1].startsWith("memstrata")) rows.push({ name: match[1], labels: match[2] || "", value: Number(match[3]) });
  }
  return rows;
}

async function loadMetrics() {
  const response = await fetch("/metrics");
  const rows = parseMetrics(await response.text());
  const body = $("metrics").tBodies[0];
  body.replaceChildren();
  for (const row of rows.filter((r) => !r.name.endsWith("_bucket"))) {
    body.append(el("tr", {}, el("td", { text: row.name }), el("td", { class: "scores", text: row.labels }),
      el("td", { class: "num", text: Number.isInteger(row.value) ? String(row.value) : row.value.toFixed(4) })));
  }
  emptyRow(body, 3, "No metrics yet.");
}

export const SCREENS = {
  users: loadUsers,
  timeline: loadTimeline,
  context: () => loadContext(),
  sessions: () => loadSessions(),
  procedures: () => loadProcedures(),
  entities: loadEntities,
  metrics: loadMetrics,
};

export function wireScreens() {
  $("more-sessions").addEventListener("click", () => loadSessions(true).catch((e) => showStatus(`Error: ${e.message}`, true)));
  $("context-form").addEventListener("submit", (event) => loadContext(event).catch((e) => showStatus(`Error: ${e.message}`, true)));
  $("procedure-form").addEventListener("submit", (event) => loadProcedures(event).catch((e) => showStatus(`Error: ${e.message}`, true)));
}
