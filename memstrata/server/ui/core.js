// Shared helpers of the Web UI: DOM building, the API client, status line, confirmation dialog.
// Every value from the server is rendered with textContent (never innerHTML).

export const KINDS = ["fact", "preference", "event", "note", "task", "episode", "summary", "procedure"];
export const PAGE = 50;
export const KEY_STORAGE = "memstrata.key";

export const state = { key: sessionStorage.getItem(KEY_STORAGE) || "", me: null, user: null, offset: 0 };

export const $ = (id) => document.getElementById(id);

export function el(tag, props = {}, ...children) {
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

export function showStatus(message, isError = false) {
  const box = $("status");
  box.textContent = message;
  box.classList.toggle("error", isError);
  box.hidden = !message;
}

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail);
    this.status = status;
  }
}

export async function api(method, path, body) {
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

export const userPath = (suffix = "") => `/v1/users/${encodeURIComponent(state.user)}${suffix}`;
export const fmtDate = (iso) => (iso ? new Date(iso).toLocaleString() : "");

export function confirmAction({ title, text, typed }) {
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


export function describe(value) {
  if (Array.isArray(value)) return value.map(describe).join("; ") || "—";
  if (value && typeof value === "object") {
    return Object.entries(value).map(([k, v]) => `${k}: ${describe(v)}`).join("; ") || "—";
  }
  return value === null || value === undefined || value === "" ? "—" : String(value);
}

export function emptyRow(body, columns, text) {
  if (!body.rows.length) body.append(el("tr", {}, el("td", { colspan: String(columns), class: "muted", text })));
}

export function isSuperseded(memory) {
  return Boolean(memory.superseded_by) || Boolean(memory.valid_to && Date.parse(memory.valid_to) <= Date.now());
}
