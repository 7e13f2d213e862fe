// The memory browser's one script. Every value is set as text (never parsed as HTML).
"use strict";

const TOKEN_KEY = "langmem-ui-token";

function readToken() {
  const m = /^#token=(.+)$/.exec(location.hash);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

function el(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const kid of kids.flat()) {
    if (kid === null || kid === undefined) continue;
    node.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return node;
}

function svgEl(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

function status(message, bad) {
  const box = document.getElementById("status");
  box.textContent = message;
  box.className = "shown" + (bad ? " bad" : "");
  clearTimeout(status.timer);
  status.timer = setTimeout(() => { box.className = ""; }, 4000);
}

class Unauthorized extends Error {}

async function api(method, path, body) {
  const headers = { Authorization: "Bearer " + (readToken() || "") };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await response.json().catch(() => ({}));
  if (response.status === 401) throw new Unauthorized(data.error || "unauthorized");
  if (!response.ok) throw new Error(data.error || response.status + " " + response.statusText);
  return data;
}

const seg = encodeURIComponent;
const when = (seconds) => (seconds ? new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ") : "");
const main = () => document.getElementById("main");

function page(...children) {
  main().replaceChildren(...children);
}

function tokenForm(reason) {
  const input = el("input", { type: "password", id: "token", placeholder: "access token" });
  const save = () => { sessionStorage.setItem(TOKEN_KEY, input.value.trim()); route(); };
  page(el("section", {},
    el("h2", {}, "Access token"),
    el("p", { class: "muted" }, reason || "This server needs its access token (the one `langmem-layers ui` printed or was given)."),
    input, " ", el("button", { onclick: save }, "Open")));
}

async function home() {
  const data = await api("GET", "/api/users");
  const list = el("ul", { class: "users", id: "users" },
    data.users.map((u) => el("li", {}, el("a", { href: "/users/" + seg(u) }, u))));
  page(el("section", {}, el("h1", {}, "Users (" + data.users.length + ")"),
    data.users.length ? list : el("p", { class: "muted" }, "No memories stored yet.")));
}

function historyOf(item, records) {
  const meta = item.metadata;
  const mine = records.filter((h) => h.field === meta.field && (h.key ?? null) === (meta.key ?? null));
  if (!mine.length) return "";
  return el("details", {}, el("summary", {}, mine.length + " change" + (mine.length > 1 ? "s" : "")),
    el("ul", { class: "small" }, mine.map((h) => el("li", {},
      (h.at || "").slice(0, 16).replace("T", " ") + " · " + h.action + ": ",
      h.old_value === null ? "" : h.old_value + " → ", h.new_value === null ? "(removed)" : h.new_value,
      h.extractor ? " (" + h.extractor + ")" : ""))));
}

function editButton(uid, item, cell, render) {
  return el("button", {
    class: "edit", onclick: () => {
      const input = el("input", { type: "text", class: "edit-value" });
      input.value = item.metadata.value ?? item.text;
      const save = async () => {
        try {
          await api("PATCH", "/api/users/" + seg(uid) + "/memories/" + seg(item.id), { text: input.value });
          status("Saved");
          await render();
        } catch (e) { status(e.message, true); }
      };
      cell.replaceChildren(input, " ", el("button", { class: "save", onclick: save }, "Save"));
      input.focus();
    },
  }, "Edit");
}

function deleteButton(uid, id, render) {
  return el("button", {
    class: "danger delete", onclick: async () => {
      if (!confirm("Delete " + id + "?")) return;
      try {
        await api("DELETE", "/api/users/" + seg(uid) + "/memories/" + seg(id));
        status("Deleted");
        await render();
      } catch (e) { status(e.message, true); }
    },
  }, "Delete");
}

function profileSection(uid, data, render) {
  const rows = data.profile.map((item) => {
    const meta = item.metadata;
    const valueCell = el("td", { class: "value" }, meta.value);
    return el("tr", { "data-id": item.id },
      el("td", {}, meta.key ? meta.field + " · " + meta.key : meta.field),
      valueCell,
      el("td", { class: "small" }, "since " + when(meta.first_stored), el("br"), "updated " + when(item.created_at)),
      el("td", { class: "small" }, meta.evidence ? "“" + meta.evidence + "”" : "",
        el("div", { class: "muted" }, (item.session_id ? "session " + item.session_id : "") + " · " + meta.extractor)),
      el("td", {}, historyOf(item, data.history)),
      el("td", {}, editButton(uid, item, valueCell, render), deleteButton(uid, item.id, render)));
  });
  return el("section", { id: "profile" }, el("h2", {}, "Profile (" + rows.length + ")"),
    rows.length ? el("table", {}, el("tr", {}, ["Item", "Value", "When", "Came from", "History", ""].map((h) => el("th", {}, h))), rows)
      : el("p", { class: "muted" }, "No profile items."));
}

function notesSection(uid, data, render) {
  const rows = data.notes.map((n) => {
    const cell = el("td", { class: "value" }, n.text);
    return el("tr", { "data-id": n.id }, el("td", { class: "small" }, when(n.created_at)), cell,
      el("td", {}, editButton(uid, n, cell, render), deleteButton(uid, n.id, render)));
  });
  return el("section", { id: "notes" }, el("h2", {}, "Notes (" + rows.length + ")"),
    rows.length ? el("table", {}, rows) : el("p", { class: "muted" }, "No notes."));
}

function episodesSection(uid, data, render) {
  const items = data.episodes.map((e) => el("div", { class: "episode", "data-id": e.id },
    el("p", {}, el("strong", {}, e.metadata.topic || "(no topic)"), " · " + when(e.created_at) +
      " · session " + (e.session_id || "") + " · importance " + Number(e.metadata.importance || 0).toFixed(2) + " ",
      deleteButton(uid, e.id, render)),
    el("p", {}, e.text),
    el("details", {}, el("summary", {}, e.turns.length + " turns"),
      el("ul", { class: "small" }, e.turns.map((t) => el("li", { "data-id": t.id }, t.text, " ", deleteButton(uid, t.id, render)))))));
  return el("section", { id: "episodes" }, el("h2", {}, "Episodes (" + items.length + ")"),
    items.length ? items : el("p", { class: "muted" }, "No episodes."));
}

function toolsSection(data) {
  const rows = data.tools.map((t) => el("tr", {}, el("td", {}, t.tool), el("td", {}, t.calls),
    el("td", {}, (100 * t.success_rate).toFixed(0) + "%"), el("td", {}, Math.round(t.p50_latency_ms) + " ms"),
    el("td", { class: "small" }, (t.failures || []).map((f) => el("div", {}, f.count + "× " + f.error_type + ": " + f.pattern)))));
  return el("section", { id: "tools" }, el("h2", {}, "Tools (" + rows.length + ")"),
    rows.length ? el("table", {}, el("tr", {}, ["Tool", "Calls", "Success", "p50", "Failure patterns (tips)"].map((h) => el("th", {}, h))), rows)
      : el("p", { class: "muted" }, "No tool calls recorded."));
}

function searchSection(uid) {
  const input = el("input", { type: "text", id: "query", placeholder: "search this user's memory" });
  const results = el("div", { id: "hits" });
  const go = async () => {
    try {
      const data = await api("GET", "/api/users/" + seg(uid) + "/search?q=" + seg(input.value));
      results.replaceChildren(data.hits.length ? el("table", {}, data.hits.map((h) => el("tr", {},
        el("td", {}, h.kind), el("td", {}, h.text),
        el("td", { class: "why" }, "score " + h.score.toFixed(3),
          Object.entries(h.metadata.why || {}).map(([k, v]) => el("div", {}, k + " " + Number(v).toFixed(3))))))) :
        el("p", { class: "muted" }, "Nothing found."));
    } catch (e) { status(e.message, true); }
  };
  input.addEventListener("keydown", (ev) => { if (ev.key === "Enter") go(); });
  return el("section", { id: "search" }, el("h2", {}, "Search"), input, " ", el("button", { onclick: go }, "Search"),
    el("p", { class: "muted small" }, "Each hit's score and its parts: relevance (lexical and dense), recency, importance."), results);
}

function accountSection(uid) {
  const exportJson = async () => {
    try {
      const data = await api("GET", "/api/users/" + seg(uid) + "/export");
      const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: "application/json" }));
      const link = el("a", { href: url, download: uid.replace(/[^A-Za-z0-9]/g, "_") + ".json" });
      link.click();
      URL.revokeObjectURL(url);
    } catch (e) { status(e.message, true); }
  };
  const confirmBox = el("input", { type: "text", id: "forget-confirm", placeholder: "type the user id to confirm" });
  const forget = async () => {
    try {
      await api("POST", "/api/users/" + seg(uid) + "/forget", { confirm: confirmBox.value });
      status("Forgotten");
      location.assign("/");
    } catch (e) { status(e.message, true); }
  };
  return el("section", { id: "account" }, el("h2", {}, "Export or forget"),
    el("button", { onclick: exportJson }, "Export JSON"), " ",
    confirmBox, " ", el("button", { class: "danger", id: "forget", onclick: forget }, "Forget this user"));
}

async function user(uid) {
  const render = async () => {
    const data = await api("GET", "/api/users/" + seg(uid));
    page(el("h1", {}, "User ", el("span", { id: "user-id" }, data.user_id)),
      profileSection(uid, data, render), searchSection(uid), notesSection(uid, data, render),
      episodesSection(uid, data, render), toolsSection(data), accountSection(uid));
  };
  await render();
}

function plot(title, points, kind, unit, span) {
  // points: [[t, value]] for a line; [[bucket index, value or null]] for bars
  const w = 500, h = 180, pad = 28;
  const svg = svgEl("svg", { class: "plot", viewBox: "0 0 " + w + " " + h, role: "img", "aria-label": title });
  const shown = points.filter((p) => p[1] !== null);
  const top = Math.max(1e-9, ...shown.map((p) => p[1]));
  const Y = (v) => h - pad - (v / top) * (h - 2 * pad);
  if (kind === "line") {
    const x0 = shown.length ? shown[0][0] : 0;
    const width = shown.length > 1 ? shown[shown.length - 1][0] - x0 : 1;
    const X = (t) => pad + ((t - x0) / (width || 1)) * (w - 2 * pad);
    if (shown.length === 1) svg.append(svgEl("circle", { cx: w / 2, cy: Y(shown[0][1]), r: 3, fill: "#2a5db0" }));
    else svg.append(svgEl("polyline", { points: shown.map((p) => X(p[0]) + "," + Y(p[1])).join(" ") }));
  } else {
    const slot = (w - 2 * pad) / span;
    for (const [i, v] of shown) svg.append(svgEl("rect", { x: pad + i * slot + 1, y: Y(v), width: Math.max(slot - 2, 1), height: h - pad - Y(v) }));
  }
  const label = svgEl("text", { x: 4, y: 12 });
  label.textContent = shown.length ? "max " + (Number.isInteger(top) ? top : top.toFixed(1)) + " " + unit : "";
  const axis = svgEl("line", { x1: pad, y1: h - pad, x2: w - pad, y2: h - pad, stroke: "#c4cad4" });
  svg.append(label, axis);
  return el("div", {}, el("h2", {}, title + (shown.length ? "" : " (none yet)")), svg);
}

const BUCKETS = 24;

function buckets(times, start, end, value) {
  // per bucket of the time range: the values of the events in it
  const width = Math.max((end - start) / BUCKETS, 1e-9);
  const out = Array.from({ length: BUCKETS }, () => []);
  times.forEach((t, i) => out[Math.max(0, Math.min(BUCKETS - 1, Math.floor((t - start) / width)))].push(value(i)));
  return out;
}

async function monitor() {
  const m = await api("GET", "/api/metrics");
  const start = m.since, end = Math.max(m.now, m.since + 1);
  const total = (b) => b.map((v, i) => [i, v.length ? v.reduce((a, x) => a + x, 0) : null]);
  const recalls = m.recalls;
  const hitRate = buckets(recalls.map((r) => r[0]), start, end, (i) => (recalls[i][2] > 0 ? 1 : 0))
    .map((v, i) => [i, v.length ? (100 * v.reduce((a, x) => a + x, 0)) / v.length : null]);
  const forgotten = m.forgotten.reduce((a, f) => a + f[1], 0);
  page(el("section", {}, el("h1", {}, "Monitoring"),
    el("p", { class: "muted" }, "Memory used by this server's process since " + when(start) + ": " +
      recalls.length + " recalls, " + m.archives.length + " archives, " + forgotten +
      " records forgotten, " + m.model_calls.length + " model calls. Time runs left to right in " +
      BUCKETS + " intervals. Serve the browser from your agent's process (create_browser_app) to watch its memory live; " +
      "OpenTelemetry carries the same numbers from every process."),
    el("div", { class: "plots" },
      plot("Recall latency", recalls.map((r) => [r[0], r[1]]), "line", "ms"),
      plot("Recall hit rate", hitRate, "bar", "%", BUCKETS),
      plot("Archives", total(buckets(m.archives, start, end, () => 1)), "bar", "per interval", BUCKETS),
      plot("Forgotten", total(buckets(m.forgotten.map((f) => f[0]), start, end, (i) => m.forgotten[i][1])), "bar", "records", BUCKETS))));
}

async function route() {
  if (!readToken()) return tokenForm();
  const path = location.pathname;
  try {
    if (path === "/monitor") await monitor();
    else if (path.startsWith("/users/")) await user(decodeURIComponent(path.slice(7)));
    else await home();
  } catch (e) {
    if (e instanceof Unauthorized) {
      sessionStorage.removeItem(TOKEN_KEY);
      tokenForm("That token was refused: " + e.message);
    } else page(el("section", {}, el("p", { class: "bad" }, "Error: " + e.message)));
  }
}

document.addEventListener("DOMContentLoaded", route);
