// The memory timeline: each fact as a bar over its validity interval, superseded bars linked by an
// arrow to the memory that replaced them, so a person sees how a fact evolved. Pure layout + SVG.

const SVG = "http://www.w3.org/2000/svg";
const ROW = 26;
const LABEL = 260;
const PAD = 12;

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

// Chains: follow superseded_by links so each chain's memories sit on consecutive rows, oldest first.
export function chains(memories) {
  const byId = new Map(memories.map((m) => [m.id, m]));
  const replaced = new Set(memories.filter((m) => m.superseded_by && byId.has(m.superseded_by)).map((m) => m.superseded_by));
  const starts = memories.filter((m) => !replaced.has(m.id));
  const ordered = [];
  for (const start of starts.sort((a, b) => Date.parse(a.valid_from || a.created_at) - Date.parse(b.valid_from || b.created_at))) {
    let node = start;
    const seen = new Set();
    while (node && !seen.has(node.id)) {
      seen.add(node.id);
      ordered.push(node);
      node = node.superseded_by ? byId.get(node.superseded_by) : undefined;
    }
  }
  return ordered;
}

export function drawTimeline(memories, width, now = Date.now()) {
  const rows = chains(memories);
  const start = Math.min(...rows.map((m) => Date.parse(m.valid_from || m.created_at)), now);
  const span = Math.max(now - start, 60_000);
  const plot = Math.max(width - LABEL - 2 * PAD, 120);
  const x = (t) => LABEL + PAD + ((t - start) / span) * plot;
  const height = rows.length * ROW + 40;
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, width: "100%", role: "img", "aria-label": "memory timeline" });
  root.append(svg("defs", {}), axis(x, start, now, height));
  root.firstChild.append(arrowHead());
  const rowOf = new Map(rows.map((m, i) => [m.id, i]));
  rows.forEach((memory, i) => root.append(bar(memory, i, x, now)));
  for (const memory of rows) {
    const target = rowOf.get(memory.superseded_by);
    if (target === undefined) continue;
    const from = rowOf.get(memory.id);
    const at = x(Date.parse(memory.valid_to || now));
    root.append(svg("path", {
      class: "supersede", d: `M ${at} ${from * ROW + 20} L ${at} ${target * ROW + 10}`, "marker-end": "url(#arrow)",
    }));
  }
  return root;
}

function bar(memory, row, x, now) {
  const from = Date.parse(memory.valid_from || memory.created_at);
  const to = memory.valid_to ? Date.parse(memory.valid_to) : now;
  const group = svg("g", { class: `bar ${memory.valid_to ? "superseded" : "current"}`, "data-id": memory.id });
  const label = memory.content.length > 38 ? `${memory.content.slice(0, 37)}…` : memory.content;
  group.append(
    svg("text", { x: PAD, y: row * ROW + 18 }, label),
    svg("rect", { x: x(from), y: row * ROW + 6, width: Math.max(x(to) - x(from), 3), height: 14, rx: 3 }),
    svg("title", {}, `${memory.content}\n${new Date(from).toLocaleString()} → ${memory.valid_to ? new Date(to).toLocaleString() : "now"}`),
  );
  return group;
}

function axis(x, start, now, height) {
  const group = svg("g", { class: "axis" });
  for (let i = 0; i <= 4; i += 1) {
    const t = start + ((now - start) * i) / 4;
    group.append(
      svg("line", { x1: x(t), x2: x(t), y1: 0, y2: height - 24 }),
      svg("text", { x: x(t), y: height - 8, "text-anchor": ["start", "middle", "middle", "middle", "end"][i] }, tick(t, now - start)),
    );
  }
  return group;
}

function tick(t, span) {
  const at = new Date(t);
  return span < 2 * 86_400_000 ? at.toLocaleTimeString() : at.toLocaleDateString();
}

function arrowHead() {
  const marker = svg("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 5, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" });
  marker.append(svg("path", { d: "M 0 0 L 10 5 L 0 10 z" }));
  return marker;
}
