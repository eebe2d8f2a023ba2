// tracemill's web page: the failure map, version comparison, runs and reports, read from
// the admin API (/api/v1). Plain JavaScript, no build step, no dependencies.
//
// Every value from the API is put into the page as text (h() below makes text nodes,
// never HTML): conversation text is written by whoever talks to the agent. The admin
// token, when the service asks for one, is kept in this tab's sessionStorage and sent as
// an Authorization header; it never goes into a URL.
"use strict";

(() => {
  const API = "/api/v1";
  const TOKEN_KEY = "tracemill.admin-token";
  const STATUSES = ["new", "persistent", "uncertain", "fixed", "passing"];
  const AXES = ["tool", "policy_rule", "user_stance", "world_state", "tool_condition", "history"];
  const main = document.getElementById("main");
  const serviceBox = document.getElementById("service");

  // ------------------------------------------------------------------ DOM helpers

  /** An element; strings and numbers among the children become text nodes. */
  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key.startsWith("on") && typeof value === "function") {
        el.addEventListener(key.slice(2), value);
      } else if (key === "class") {
        el.className = value;
      } else if (key === "style") {
        Object.assign(el.style, value); // CSSOM: allowed by the page's CSP
      } else {
        el.setAttribute(key, value === true ? "" : String(value));
      }
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      el.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return el;
  }

  const enc = encodeURIComponent;
  const known = (value, list) => (list.includes(value) ? value : "other");

  function chip(text, kind) {
    return h("span", { class: "chip " + (kind || "") }, text);
  }

  function statusChip(status) {
    return chip(status, "status status-" + known(status, STATUSES));
  }

  function outcomeChip(outcome) {
    const value = outcome || "ungraded";
    return chip(value === "pass" ? "passed" : value === "fail" ? "failed" : value,
      "outcome outcome-" + known(value, ["pass", "fail", "ungraded"]));
  }

  function coordinates(list) {
    return h("span", { class: "coords" }, (list || []).map((c) =>
      h("span", { class: "coord" }, h("span", { class: "axis" }, c.axis), h("span", { class: "value" }, c.value))));
  }

  function notice(kind, ...children) {
    return h("div", { class: "notice " + kind, role: kind === "error" ? "alert" : "status" }, ...children);
  }

  function section(title, ...children) {
    return h("section", { class: "panel" }, h("h2", null, title), ...children);
  }

  function table(headers, rows, cls) {
    return h("table", { class: "grid " + (cls || "") },
      h("thead", null, h("tr", null, headers.map((x) => h("th", null, x)))),
      h("tbody", null, rows));
  }

  // ------------------------------------------------------------------ formatting

  const numberFormat = new Intl.NumberFormat("en-US");
  const num = (x) => (x === null || x === undefined ? "–" : numberFormat.format(x));

  function pct(rate) {
    if (rate === null || rate === undefined) return "–";
    const value = rate * 100;
    return (value > 0 && value < 10 ? value.toFixed(1) : value.toFixed(0)) + "%";
  }

  function rateText(period) {
    if (!period || !period.graded) return "not graded";
    const interval = period.interval ? ` [${pct(period.interval.low)}, ${pct(period.interval.high)}]` : "";
    return `${period.failed}/${period.graded} = ${pct(period.fail_rate)}${interval}`;
  }

  function points(x) {
    const value = Math.round(x * 100);
    return (value > 0 ? "+" : "") + value;
  }

  function changeText(difference) {
    if (!difference) return "–";
    return `${points(difference.low)} to ${points(difference.high)} pts`;
  }

  function pText(p) {
    if (p === null || p === undefined) return "–";
    return p < 0.001 ? "p < 0.001" : "p = " + p.toFixed(3);
  }

  function fromNano(nano) {
    return nano ? new Date(Number(nano) / 1e6) : null;
  }

  function when(date) {
    if (!date || Number.isNaN(date.getTime())) return "–";
    return date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
  }

  function duration(seconds) {
    if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "–";
    if (seconds < 60) return seconds.toFixed(seconds < 10 ? 1 : 0) + " s";
    const minutes = Math.floor(seconds / 60);
    if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
    const hours = Math.floor(minutes / 60);
    if (hours < 48) return `${hours} h ${minutes % 60} min`;
    return `${Math.round(hours / 24)} days`;
  }

  function relative(date) {
    if (!date) return "–";
    const seconds = (date.getTime() - Date.now()) / 1000;
    const size = duration(Math.abs(seconds));
    return seconds >= 0 ? "in " + size : size + " ago";
  }

  // white → yellow → orange → red → dark red, by fail rate
  const HEAT = [[0, [248, 250, 252]], [0.1, [254, 243, 199]], [0.3, [253, 186, 116]],
    [0.55, [239, 68, 68]], [1, [127, 29, 29]]];

  function heat(rate) {
    const r = Math.max(0, Math.min(1, rate));
    for (let i = 1; i < HEAT.length; i++) {
      const [x1, c1] = HEAT[i];
      const [x0, c0] = HEAT[i - 1];
      if (r <= x1) {
        const t = (r - x0) / (x1 - x0);
        const mix = c0.map((v, k) => Math.round(v + (c1[k] - v) * t));
        return `rgb(${mix[0]}, ${mix[1]}, ${mix[2]})`;
      }
    }
    return "rgb(127, 29, 29)";
  }

  /** The 95% interval as a shaded span with the rate as a tick: wide for 3/3, narrow for 86/86. */
  function intervalBar(period) {
    if (!period || !period.graded || period.fail_rate === null) {
      return h("span", { class: "ibar none" }, "not graded");
    }
    const low = period.interval ? period.interval.low : period.fail_rate;
    const high = period.interval ? period.interval.high : period.fail_rate;
    return h("span", { class: "ibar", title: rateText(period) },
      h("span", { class: "span", style: { left: low * 100 + "%", width: Math.max(0.8, (high - low) * 100) + "%" } }),
      h("span", { class: "tick", style: { left: period.fail_rate * 100 + "%" } }));
  }

  // ------------------------------------------------------------------ the API

  class ApiError extends Error {
    constructor(status, message, path) {
      super(message);
      this.status = status;
      this.path = path;
    }
  }

  let spec = null; // the OpenAPI document: which routes this service offers

  async function request(method, path, body) {
    const headers = { Accept: "application/json" };
    const token = sessionStorage.getItem(TOKEN_KEY);
    if (token) headers.Authorization = "Bearer " + token;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(API + path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store", credentials: "omit", redirect: "error",
      });
    } catch (error) {
      throw new ApiError(0, `the service does not answer (${error.message}); is tracemill serve still running?`, path);
    }
    const text = await response.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch (_) {
      data = null;
    }
    if (!response.ok) {
      let message = `${response.status} ${response.statusText}`;
      if (data && typeof data.error === "string") message = data.error;
      else if (data && data.detail) message = JSON.stringify(data.detail);
      throw new ApiError(response.status, message, path);
    }
    return data;
  }

  const get = (path) => request("GET", path);
  const post = (path, body) => request("POST", path, body);

  async function loadSpec() {
    try {
      spec = await get("/openapi.json");
    } catch (error) {
      if (error.status === 401) throw error;
      spec = null; // unknown: try every route and say so when one is missing
    }
  }

  /** Whether the service offers ``method template`` (true when its OpenAPI document is unknown). */
  function offers(template, method) {
    if (!spec || !spec.paths) return true;
    const item = spec.paths[API + template];
    return Boolean(item && (!method || item[method.toLowerCase()]));
  }

  function query(params) {
    const pairs = Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== "");
    return pairs.length ? "?" + pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join("&") : "";
  }

  function unavailable(what, route) {
    return notice("muted", `${what} is not available from this service: it does not offer `,
      h("code", null, route), ". Upgrade the service, or use the command line.");
  }

  // ------------------------------------------------------------------ routing

  let current = 0;
  let timers = [];

  function later(gen, fn, ms) {
    if (gen !== current) return;
    timers.push(setTimeout(() => {
      if (gen === current) fn();
    }, ms));
  }

  function show(gen, ...nodes) {
    if (gen !== current) return false;
    main.replaceChildren(...nodes.flat(Infinity).filter((node) => node !== null && node !== undefined && node !== false));
    return true;
  }

  const ROUTES = [
    [/^\/map$/, "map", viewMap],
    [/^\/situation\/([^/]+)$/, "map", viewSituation],
    [/^\/compare$/, "compare", viewCompare],
    [/^\/runs$/, "runs", viewRuns],
    [/^\/runs\/([^/]+)$/, "runs", viewRun],
    [/^\/reports$/, "reports", viewReports],
    [/^\/conversation\/([^/]+)$/, "map", viewConversation],
    [/^\/rollout\/([^/]+)$/, "map", viewRollout],
  ];

  async function render() {
    timers.forEach(clearTimeout);
    timers = [];
    const gen = ++current;
    const raw = location.hash.replace(/^#/, "") || "/map";
    const [path, search] = raw.split("?", 2);
    const params = new URLSearchParams(search || "");
    for (const [pattern, page, view] of ROUTES) {
      const match = path.match(pattern);
      if (!match) continue;
      for (const link of document.querySelectorAll("#nav a")) {
        link.classList.toggle("active", link.dataset.page === page);
      }
      document.title = "tracemill · " + (document.querySelector(`#nav a[data-page="${page}"]`) || {}).textContent;
      try {
        if (spec === null) await loadSpec();
        await view({ gen, args: match.slice(1).map(decodeURIComponent), params });
      } catch (error) {
        if (gen === current) failed(gen, error);
      }
      return;
    }
    show(gen, notice("error", "No page at ", h("code", null, "#" + raw), ". ", h("a", { href: "#/map" }, "Go to the failure map.")));
  }

  function failed(gen, error) {
    if (error.status === 401) {
      show(gen, tokenPrompt(error));
      return;
    }
    show(gen, notice("error", h("strong", null, "Could not load this page. "), error.message,
      " ", h("button", { type: "button", class: "link", onclick: render }, "Retry")));
  }

  // ------------------------------------------------------------------ the token

  function tokenPrompt(error) {
    const given = sessionStorage.getItem(TOKEN_KEY);
    if (given) sessionStorage.removeItem(TOKEN_KEY);
    const input = h("input", {
      type: "password", id: "token", name: "token", autocomplete: "off", required: true,
      placeholder: "TRACEMILL_ADMIN_TOKEN", spellcheck: "false",
    });
    const form = h("form", {
      class: "panel token", onsubmit: (event) => {
        event.preventDefault();
        const value = input.value.trim();
        if (!value) return;
        sessionStorage.setItem(TOKEN_KEY, value);
        spec = null;
        refreshService();
        render();
      },
    },
    h("h1", null, "Admin token"),
    h("p", null, "This service asks for its admin token before it shows conversations, the map or runs: ",
      "the value of ", h("code", null, "TRACEMILL_ADMIN_TOKEN"), " it was started with."),
    given ? notice("error", "The service refused that token: ", error.message) : null,
    h("label", { for: "token" }, "Token"),
    h("div", { class: "row" }, input, h("button", { type: "submit", class: "primary" }, "Unlock")),
    h("p", { class: "muted small" }, "Kept in this browser tab only (sessionStorage), sent as an ",
      h("code", null, "Authorization: Bearer"), " header; never put in a URL."));
    setTimeout(() => input.focus(), 0);
    return form;
  }

  // ------------------------------------------------------------------ the service line

  let serviceTimer = null;

  async function refreshService() {
    clearTimeout(serviceTimer);
    let delay = 10000;
    try {
      const status = await get("/status");
      const running = (status.jobs || []).filter((j) => j.state === "running" || j.state === "queued");
      const parts = [
        h("span", null, h("b", null, num(status.counts.spans)), " spans"),
        h("span", null, h("b", null, num(status.conversations)), " conversations"),
        h("span", null, h("b", null, num(status.situations)), " situations"),
      ];
      if (running.length) {
        delay = 2000;
        parts.push(h("a", { class: "live", href: "#/runs" }, h("span", { class: "dot" }), `run ${running[0].state}: ${running[0].rollouts} rollouts`));
      } else {
        const next = (status.schedule || []).filter((j) => j.name === "generate" && j.next_run)[0];
        if (next) parts.push(h("span", { title: when(new Date(next.next_run)) }, "next run " + relative(new Date(next.next_run))));
      }
      if (status.map_error) parts.push(h("span", { class: "bad", title: status.map_error }, "map refresh failed"));
      if (sessionStorage.getItem(TOKEN_KEY)) {
        parts.push(h("button", {
          type: "button", class: "link", title: "Forget the admin token in this tab",
          onclick: () => {
            sessionStorage.removeItem(TOKEN_KEY);
            spec = null;
            refreshService();
            render();
          },
        }, "forget token"));
      }
      serviceBox.replaceChildren(...parts);
    } catch (error) {
      serviceBox.replaceChildren(h("span", { class: error.status === 401 ? "muted" : "bad" },
        error.status === 401 ? "admin token needed" : "service unreachable"));
    }
    if (!document.hidden) serviceTimer = setTimeout(refreshService, delay);
  }

  // ------------------------------------------------------------------ transcripts

  function contentText(content) {
    if (content === null || content === undefined) return "";
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
      return content.map((part) => (typeof part === "string" ? part : part.text || part.content || JSON.stringify(part))).join("\n");
    }
    return JSON.stringify(content, null, 2);
  }

  function pretty(text) {
    if (typeof text !== "string") return JSON.stringify(text, null, 2);
    try {
      return JSON.stringify(JSON.parse(text), null, 2);
    } catch (_) {
      return text;
    }
  }

  const ROLES = { system: "System", user: "User", assistant: "Agent", tool: "Tool" };

  /** Messages in OpenAI chat format; ``results`` maps a tool call id to {status, error, focal}. */
  function transcript(messages, results) {
    const shown = (messages || []).map((message, index) => {
      const role = message.role || "unknown";
      const label = ROLES[role] || role;
      const text = contentText(message.content);
      if (role === "system") {
        return h("details", { class: "msg system" }, h("summary", null, "System prompt"), h("div", { class: "text" }, text));
      }
      const result = role === "tool" ? (results || {})[message.tool_call_id] || {} : {};
      const body = [];
      if (role === "tool") {
        body.push(h("pre", { class: "result" }, pretty(text)));
      } else if (text) {
        body.push(h("div", { class: "text" }, text));
      } else if (!(message.tool_calls || []).length) {
        body.push(h("div", { class: "text empty" }, "(empty reply)"));
      }
      for (const call of message.tool_calls || []) {
        const fn = call.function || call;
        body.push(h("div", { class: "call" }, h("span", { class: "fn" }, fn.name || "?"), h("pre", null, pretty(fn.arguments || ""))));
      }
      const status = result.status && result.status !== "ok" ? chip(result.status, "bad") : null;
      return h("div", { class: `msg ${known(role, Object.keys(ROLES))}${result.focal ? " focal" : ""}` },
        h("div", { class: "who" }, label, role === "tool" && message.name ? " · " + message.name : "", " ", status,
          result.focal ? chip("where it went wrong", "bad") : null, h("span", { class: "idx" }, "#" + index)),
        body);
    });
    return h("div", { class: "transcript" }, shown.length ? shown : h("p", { class: "muted" }, "No messages were captured."));
  }

  function facts(pairs) {
    return h("dl", { class: "facts" }, pairs.filter((p) => p).map(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
  }

  function conversationBody(c) {
    const results = {};
    (c.steps || []).forEach((step, index) => {
      if (step.call_id) results[step.call_id] = { status: step.status, error: step.error, focal: index === c.focal_step };
    });
    return h("div", { class: "item-body" },
      facts([
        ["model version", c.model_version || "–"],
        ["outcome", [outcomeChip(c.outcome), " ", c.outcome_source || ""]],
        ["started", when(fromNano(c.start_unix_nano))],
        ["tools", (c.tools || []).join(", ") || "–"],
        ["tokens", `${num(c.input_tokens)} in · ${num(c.output_tokens)} out`],
        ["coordinates", coordinates(AXES.map((axis) => ({ axis, value: c[axis] })))],
        ["traces", (c.trace_ids || []).join(", ")],
      ]),
      c.content_missing ? notice("warn", "Some message content was not captured (capture was off).") : null,
      (c.errors || []).length ? notice("error", "Errors: ", c.errors.join("; ")) : null,
      (c.evaluations || []).length ? h("ul", { class: "evals" }, c.evaluations.map((e) =>
        h("li", null, e.passed === false ? chip("fail", "bad") : e.passed ? chip("pass", "good") : chip("–"), " ",
          h("b", null, e.name || "evaluation"), e.explanation ? ": " + e.explanation : ""))) : null,
      transcript(c.messages, results));
  }

  function rolloutBody(r) {
    const results = {};
    for (const t of r.tool_results || []) results[t.call_id] = { status: t.status };
    const failedChecks = (r.checks || []).filter((c) => !c.passed);
    return h("div", { class: "item-body" },
      facts([
        ["run", h("a", { href: "#/runs/" + enc(r.run_id) }, r.run_id), " #", r.index],
        ["purpose", r.purpose],
        ["aimed at", r.situation],
        ["mutation", [r.mutation || "–", " ", r.mutation_fired === true ? chip("fired", "good") : r.mutation_fired === false ? chip("did not fire", "bad") : null, " ", r.mutation_detail || ""]],
        ["person", r.persona ? `${r.persona.name || ""} (${r.persona.tone || r.persona.stance || ""}, patience ${r.persona.patience ?? "–"})` : "–"],
        ["goal", r.goal ? r.goal.ask : "–"],
        ["from production", (r.source_conversations || []).map((id, i) => [i ? ", " : "", h("a", { href: "#/conversation/" + enc(id) }, id)])],
        ["grade", [outcomeChip(r.outcome), " ", r.reason || "", r.labeled_by ? ` (${r.labeled_by})` : ""]],
        ["ended by", r.ended_by],
        ["agent", r.agent],
      ]),
      r.error ? notice("error", r.error) : null,
      failedChecks.length ? h("ul", { class: "evals" }, failedChecks.map((c) =>
        h("li", null, chip("check failed", "bad"), " ", h("b", null, c.name), ": ", c.reason))) : null,
      (r.labels || []).length ? h("ul", { class: "evals" }, r.labels.map((l) =>
        h("li", null, chip("label", ""), " ", l.passed === false ? chip("fail", "bad") : l.passed ? chip("pass", "good") : "",
          ` by ${l.labeled_by} (${l.kind}) at ${l.at}`, l.note ? ": " + l.note : ""))) : null,
      transcript(r.messages, results));
  }

  /** A collapsed item whose body is built when opened. */
  function expandable(summary, body, cls) {
    const details = h("details", { class: "item " + (cls || "") }, h("summary", null, summary));
    details.addEventListener("toggle", () => {
      if (details.open && details.children.length === 1) details.append(body());
    });
    return details;
  }

  function conversationItem(c) {
    return expandable([
      h("div", { class: "line" }, outcomeChip(c.outcome), chip(c.model_version || "no version", "version"),
        h("code", { class: "id" }, c.conversation_id), h("span", { class: "grow" }),
        h("span", { class: "muted small" }, when(fromNano(c.start_unix_nano)))),
      h("div", { class: "ask" }, c.first_ask || "(first message not captured)"),
    ], () => conversationBody(c), "conversation");
  }

  function rolloutItem(r) {
    return expandable([
      h("div", { class: "line" }, outcomeChip(r.outcome), chip(r.mutation || r.purpose, "version"),
        r.failure_class ? chip(r.failure_class, "bad") : null,
        h("code", { class: "id" }, r.rollout_id), h("span", { class: "grow" }),
        h("span", { class: "muted small" }, `${r.turns} turns`)),
      h("div", { class: "ask" }, r.goal && r.goal.ask ? r.goal.ask : r.mutation_detail || ""),
    ], () => rolloutBody(r), "rollout");
  }

  // ------------------------------------------------------------------ the failure map

  function periodKey(situation, which) {
    const period = situation[which];
    if (period && period.version) return period.version;
    return which === "latest" ? "latest" : situation.compared === "baseline" ? "rest of latest" : "earlier half";
  }

  function columns(situations) {
    const seen = [];
    for (const s of situations) {
      for (const which of ["previous", "latest"]) {
        const key = periodKey(s, which);
        if (!seen.includes(key)) seen.push(key);
      }
    }
    return seen;
  }

  function situationHref(id, version) {
    return "#/situation/" + enc(id) + (version ? "?version=" + enc(version) : "");
  }

  function heatCell(situation, which) {
    const period = situation[which];
    if (!period || !period.graded) {
      return h("td", { class: "heat" }, h("span", { class: "cell empty", title: "no graded conversations" }, "–"));
    }
    const dark = period.fail_rate > 0.45;
    return h("td", { class: "heat" },
      h("a", {
        class: "cell" + (dark ? " dark" : ""),
        href: situationHref(situation.situation_id, period.version),
        title: `${situation.label}\n${period.version || periodKey(situation, which)}: ${rateText(period)}`,
        style: { background: heat(period.fail_rate) },
        "data-situation": situation.situation_id,
        "data-version": period.version || "",
      }, h("span", { class: "rate" }, pct(period.fail_rate)), h("span", { class: "n" }, `${period.failed}/${period.graded}`)));
  }

  function heatmap(situations) {
    const cols = columns(situations);
    const rows = situations.map((s) => {
      const cells = cols.map((key) => {
        if (periodKey(s, "previous") === key) return heatCell(s, "previous");
        if (periodKey(s, "latest") === key) return heatCell(s, "latest");
        return h("td", { class: "heat" }, h("span", { class: "cell empty" }, ""));
      });
      return h("tr", { "data-situation": s.situation_id },
        h("td", null, statusChip(s.status)),
        h("th", { scope: "row", class: "label" },
          h("a", { href: situationHref(s.situation_id) }, coordinates(s.coordinates)),
          h("div", { class: "muted small" }, `${num(s.conversations)} conversations`, s.low_support ? " · low support" : "")),
        cells,
        h("td", { class: "num" }, changeText(s.difference), h("div", { class: "muted small" }, pText(s.p_value))),
        h("td", { class: "share" }, h("span", { class: "sharebar" }, h("span", { style: { width: s.budget_share * 100 + "%" } })),
          h("span", { class: "small" }, pct(s.budget_share))));
    });
    return h("table", { class: "heatmap", id: "heatmap" },
      h("thead", null, h("tr", null, h("th", null, "Status"), h("th", null, "Situation"),
        cols.map((c) => h("th", { class: "heat" }, c)), h("th", null, "Change (95% CI)"), h("th", null, "Next run's share"))),
      h("tbody", null, rows));
  }

  function legend() {
    const stops = [0, 0.1, 0.25, 0.5, 0.75, 1];
    return h("div", { class: "legend" }, h("span", { class: "muted small" }, "fail rate"),
      stops.map((x) => h("span", { class: "swatch" + (x > 0.45 ? " dark" : ""), style: { background: heat(x) } }, pct(x))),
      h("span", { class: "muted small" }, "· click a cell for that version's conversations and the rollouts"));
  }

  function statusCounts(situations) {
    const counts = {};
    for (const s of situations) counts[s.status] = (counts[s.status] || 0) + 1;
    return h("div", { class: "kpis" }, STATUSES.filter((s) => s !== "passing").map((s) =>
      h("a", { class: "kpi status-" + s, href: "#/map" + query({ status: s }) },
        h("b", null, String(counts[s] || 0)), h("span", null, s))));
  }

  async function viewMap({ gen, params }) {
    const status = params.get("status") || "";
    const axis = params.get("axis") || "";
    const [situations, cells] = await Promise.all([
      get("/map" + query({ status, axis })),
      offers("/map/cells") ? get("/map/cells").catch(() => null) : Promise.resolve(null),
    ]);
    const filter = (name, value, options) => h("label", null, name, " ",
      h("select", {
        "data-filter": name, onchange: (event) => {
          const next = { status, axis };
          next[name] = event.target.value;
          location.hash = "#/map" + query(next);
        },
      }, h("option", { value: "" }, "all"), options.map((o) => h("option", { value: o, selected: o === value }, o))));
    const head = h("div", { class: "pagehead" },
      h("div", null, h("h1", null, "Failure map"),
        h("p", { class: "muted" }, comparisonLine(situations))),
      h("div", { class: "filters" }, filter("status", status, STATUSES.filter((s) => s !== "passing")), filter("axis", axis, AXES)));
    if (!situations.length) {
      show(gen, head, notice("muted", status || axis
        ? "No situation matches these filters."
        : "The failure map is empty: no processed conversation fails in a situation the map can isolate yet. " +
          "The service refreshes the map on its schedule; `tracemill process` refreshes it by hand."));
      return;
    }
    const computed = fromNano(Math.max(...situations.map((s) => s.computed_unix_nano || 0)));
    show(gen, head, statusCounts(situations),
      section("Situations by model version", legend(), h("div", { class: "scroll" }, heatmap(situations)),
        h("p", { class: "muted small" }, `Worst first. Each cell: fail rate of the situation's graded conversations in that version (failed/graded); hover for the 95% interval. Computed ${when(computed)}.`)),
      cells ? cellGrid(cells, situations, params) : null);
  }

  function comparisonLine(situations) {
    const compared = situations.filter((s) => s.compared === "versions")[0];
    if (compared) return `Model version ${compared.latest.version} compared with ${compared.previous.version}.`;
    if (situations.length) return "One model version: the latest conversations compared with the rest.";
    return "";
  }

  /** Pair cells as an axis-by-axis grid (needs GET /map/cells). */
  function cellGrid(cells, situations, params) {
    const pairs = {};
    for (const c of cells) {
      if (c.axis_b === "*") continue;
      const key = [c.axis_a, c.axis_b].sort().join("|");
      pairs[key] = (pairs[key] || 0) + (c.status !== "passing" ? 1 : 0);
    }
    const keys = Object.keys(pairs).sort((a, b) => pairs[b] - pairs[a] || a.localeCompare(b));
    if (!keys.length) return null;
    const chosen = keys.includes(params.get("pair")) ? params.get("pair") : keys[0];
    const [rowAxis, colAxis] = chosen.split("|");
    const inPair = cells.filter((c) => c.axis_b !== "*" && [c.axis_a, c.axis_b].sort().join("|") === chosen);
    const at = {};
    const rowValues = new Set();
    const colValues = new Set();
    for (const c of inPair) {
      const rowValue = c.axis_a === rowAxis ? c.value_a : c.value_b;
      const colValue = c.axis_a === rowAxis ? c.value_b : c.value_a;
      rowValues.add(rowValue);
      colValues.add(colValue);
      at[rowValue + "\u0000" + colValue] = c;
    }
    const bySituationCell = {};
    for (const s of situations) for (const label of s.cells || []) bySituationCell[label] = s;
    const cols = [...colValues].sort();
    const rows = [...rowValues].sort().map((rv) => h("tr", null, h("th", { scope: "row" }, rv), cols.map((cv) => {
      const c = at[rv + "\u0000" + cv];
      if (!c || !c.latest || !c.latest.graded) return h("td", { class: "heat" }, h("span", { class: "cell empty" }, c ? "–" : ""));
      const owner = bySituationCell[c.cell];
      const attrs = {
        class: "cell" + (c.latest.fail_rate > 0.45 ? " dark" : "") + (owner ? " owned status-" + known(owner.status, STATUSES) : ""),
        title: `${c.cell}\n${c.status}: ${rateText(c.latest)}${owner ? "\nsituation: " + owner.label : ""}`,
        style: { background: heat(c.latest.fail_rate) },
      };
      const inner = [h("span", { class: "rate" }, pct(c.latest.fail_rate)), h("span", { class: "n" }, `${c.latest.failed}/${c.latest.graded}`)];
      return h("td", { class: "heat" }, owner ? h("a", Object.assign(attrs, { href: situationHref(owner.situation_id) }), inner) : h("span", attrs, inner));
    })));
    const select = h("select", {
      "data-filter": "pair", onchange: (event) => {
        const next = Object.fromEntries(params.entries());
        next.pair = event.target.value;
        location.hash = "#/map" + query(next);
      },
    }, keys.map((k) => h("option", { value: k, selected: k === chosen }, k.replace("|", " × ") + (pairs[k] ? ` (${pairs[k]} failing)` : ""))));
    return section("Pair cells",
      h("div", { class: "filters" }, h("label", null, "axes ", select)),
      h("div", { class: "scroll" }, h("table", { class: "heatmap pairs" },
        h("thead", null, h("tr", null, h("th", null, `${rowAxis} \\ ${colAxis}`), cols.map((c) => h("th", { class: "heat" }, c)))),
        h("tbody", null, rows))),
      h("p", { class: "muted small" }, "Latest period's fail rate of every stored pair of values on these two axes; outlined cells belong to a situation (click to open it)."));
  }

  // ------------------------------------------------------------------ one situation

  function periodCard(title, period) {
    return h("div", { class: "period" }, h("div", { class: "muted small" }, title),
      h("div", { class: "big" }, period && period.graded ? pct(period.fail_rate) : "–"),
      h("div", { class: "small" }, rateText(period)), intervalBar(period),
      period && period.baseline !== null && period.baseline !== undefined
        ? h("div", { class: "muted small" }, `rest of this period: ${pct(period.baseline)}`) : null);
  }

  async function viewSituation({ gen, args, params }) {
    const id = args[0];
    const version = params.get("version") || "";
    const outcome = params.get("outcome") || "";
    let situation;
    try {
      situation = await get("/map/situations/" + enc(id));
    } catch (error) {
      if (error.status !== 404) throw error;
      show(gen, notice("error", `No situation ${id} in the failure map: the map may have changed at its last refresh. `, h("a", { href: "#/map" }, "Back to the map.")));
      return;
    }
    const [conversations, rollouts] = await Promise.all([
      get("/conversations" + query({ situation: id, version, outcome, limit: 50 })).catch((e) => e),
      offers("/rollouts") ? get("/rollouts" + query({ situation: id, limit: 50 })).catch((e) => e) : Promise.resolve(null),
    ]);
    for (const answer of [conversations, rollouts]) if (answer instanceof ApiError && answer.status === 401) throw answer;
    const versions = [situation.previous.version, situation.latest.version].filter((v, i, all) => v && all.indexOf(v) === i);
    const link = (next) => "#/situation/" + enc(id) + query({ version, outcome, ...next });
    const segment = (name, value, options) => h("div", { class: "segmented", role: "group", "aria-label": name },
      options.map(([v, text]) => h("a", { href: link({ [name]: v }), class: v === value ? "on" : "", "data-segment": name + ":" + v }, text)));
    const production = conversations instanceof ApiError
      ? notice("error", conversations.message)
      : conversations.length ? capped(conversations, conversationItem, 20)
        : h("p", { class: "muted" }, "No member conversation matches these filters.");
    let generated;
    if (rollouts === null) generated = unavailable("Rollouts", "GET /api/v1/rollouts");
    else if (rollouts instanceof ApiError) generated = notice("error", rollouts.message);
    else if (!rollouts.length) generated = h("p", { class: "muted" }, "No rollout has been generated for this situation yet. A run aims at it when it is new or persistent (see Runs).");
    else generated = capped(rollouts, rolloutItem, 20);
    show(gen,
      h("nav", { class: "crumbs" }, h("a", { href: "#/map" }, "Failure map"), " / ", situation.situation_id),
      h("div", { class: "pagehead" }, h("div", null,
        h("h1", null, statusChip(situation.status), " ", coordinates(situation.coordinates)),
        h("p", { class: "reason" }, situation.reason))),
      h("div", { class: "periods" },
        periodCard(`previous · ${periodKey(situation, "previous")}`, situation.previous),
        periodCard(`latest · ${periodKey(situation, "latest")}`, situation.latest),
        h("div", { class: "period" }, h("div", { class: "muted small" }, "change (95% CI)"),
          h("div", { class: "big" }, changeText(situation.difference)), h("div", { class: "small" }, pText(situation.p_value)),
          situation.low_support ? chip("low support: tentative", "warn") : null),
        h("div", { class: "period" }, h("div", { class: "muted small" }, "members · next run's share"),
          h("div", { class: "big" }, num(situation.conversations)), h("div", { class: "small" }, `${pct(situation.budget_share)} of a run's budget · priority ${situation.priority.toFixed(2)}`))),
      h("div", { class: "sides" },
        h("section", { class: "panel side", id: "production" },
          h("h2", null, "Production conversations", h("span", { class: "count" }, conversations instanceof ApiError ? "" : String(conversations.length))),
          h("div", { class: "filters" }, segment("version", version, [["", "all versions"], ...versions.map((v) => [v, v])]),
            segment("outcome", outcome, [["", "any"], ["fail", "failed"], ["pass", "passed"]])),
          production),
        h("section", { class: "panel side", id: "rollouts" },
          h("h2", null, "Generated rollouts", h("span", { class: "count" }, Array.isArray(rollouts) ? String(rollouts.length) : "")),
          h("p", { class: "muted small" }, "Simulated conversations aimed at this situation, with their grade."),
          generated)));
  }

  async function viewConversation({ gen, args }) {
    const c = await get("/conversations/" + enc(args[0]));
    show(gen, h("nav", { class: "crumbs" }, h("a", { href: "#/map" }, "Failure map"), " / ",
      (c.situations || []).map((s) => [h("a", { href: situationHref(s) }, s), " / "]), c.conversation_id),
    h("h1", null, "Conversation ", h("code", null, c.conversation_id)),
    h("section", { class: "panel" }, conversationBody(c)));
  }

  async function viewRollout({ gen, args }) {
    const r = await get("/rollouts/" + enc(args[0]));
    show(gen, h("nav", { class: "crumbs" }, h("a", { href: "#/runs" }, "Runs"), " / ",
      h("a", { href: "#/runs/" + enc(r.run_id) }, r.run_id), " / ", r.rollout_id,
      r.situation_id ? [" · ", h("a", { href: situationHref(r.situation_id) }, "its situation")] : null),
    h("h1", null, "Rollout ", h("code", null, r.rollout_id)),
    h("section", { class: "panel" }, rolloutBody(r)));
  }

  // ------------------------------------------------------------------ versions

  function compareCard(s) {
    return h("a", { class: "card status-" + known(s.status, STATUSES), href: situationHref(s.situation_id), "data-situation": s.situation_id },
      h("div", null, coordinates(s.coordinates)),
      h("div", { class: "versus" },
        h("div", null, h("span", { class: "muted small" }, periodKey(s, "previous")), h("b", null, pct(s.previous.fail_rate)), intervalBar(s.previous),
          h("span", { class: "muted small" }, s.previous.graded ? `${s.previous.failed}/${s.previous.graded}` : "")),
        h("span", { class: "arrow" }, "→"),
        h("div", null, h("span", { class: "muted small" }, periodKey(s, "latest")), h("b", null, pct(s.latest.fail_rate)), intervalBar(s.latest),
          h("span", { class: "muted small" }, s.latest.graded ? `${s.latest.failed}/${s.latest.graded}` : ""))),
      h("div", { class: "small" }, changeText(s.difference), " · ", pText(s.p_value), s.low_support ? " · low support" : ""),
      h("div", { class: "muted small" }, s.reason));
  }

  async function viewCompare({ gen, params }) {
    const since = params.get("since") || "";
    let situations;
    let versions = [];
    if (since) {
      if (!offers("/reports/regression")) {
        show(gen, unavailable("Comparing with a chosen version", "GET /api/v1/reports/regression"));
        return;
      }
      const answer = await get("/reports/regression" + query({ since }));
      const report = answer.report || answer; // {report, examples}, or the bare report
      situations = report.situations;
      versions = report.versions || [];
    } else {
      situations = await get("/map");
    }
    if (!versions.length) {
      for (const s of situations) for (const p of [s.previous, s.latest]) if (p.version && !versions.some((v) => v.version === p.version)) versions.push({ version: p.version });
    }
    const latest = (situations[0] && situations[0].latest.version) || "";
    const choices = versions.map((v) => v.version).filter((v) => v && v !== latest);
    const picker = offers("/reports/regression") && choices.length ? h("label", null, "compare the latest with ",
      h("select", {
        "data-filter": "since", onchange: (event) => { location.hash = "#/compare" + query({ since: event.target.value }); },
      }, h("option", { value: "" }, "the previous version (map)"), choices.map((v) => h("option", { value: v, selected: v === since }, v)))) : null;
    const groups = [["new", "New", "failing now, not before"], ["persistent", "Persistent", "failing before and now"],
      ["fixed", "Fixed", "failing before, not now"], ["uncertain", "Uncertain", "not enough recent data"]];
    const board = groups.filter(([key]) => key !== "uncertain" || situations.some((s) => s.status === key)).map(([key, title, hint]) => {
      const members = situations.filter((s) => s.status === key);
      return h("section", { class: "lane status-" + key, id: "lane-" + key },
        h("h2", null, title, h("span", { class: "count" }, String(members.length))), h("p", { class: "muted small" }, hint),
        members.length ? members.map(compareCard) : h("p", { class: "muted" }, "none"));
    });
    show(gen, h("div", { class: "pagehead" }, h("div", null, h("h1", null, "Version comparison"),
      h("p", { class: "muted" }, comparisonLine(situations))), h("div", { class: "filters" }, picker)),
    situations.length ? h("div", { class: "lanes", "data-since": since }, board) : notice("muted", "The failure map is empty: nothing to compare yet."));
  }

  // ------------------------------------------------------------------ runs

  function budgetRollouts(budget) {
    const match = /^\s*(\d+)\s*(rollouts?)?\s*$/i.exec(budget || "");
    return match ? Number(match[1]) : null;
  }

  function progress(job) {
    const total = budgetRollouts(job.budget);
    const done = job.state === "finished";
    const fraction = total ? Math.min(1, job.rollouts / total) : done ? 1 : null;
    const label = total ? `${job.rollouts} / ${total} rollouts` : `${job.rollouts} rollouts · budget ${job.budget}`;
    return h("div", {
      class: `progress ${known(job.state, ["queued", "running", "finished", "failed", "stopped", "interrupted"])}${fraction === null ? " indeterminate" : ""}`,
      role: "progressbar", "aria-valuemin": "0", "aria-valuemax": total || "", "aria-valuenow": job.rollouts, "aria-label": label,
    }, h("span", { class: "fill", style: { width: fraction === null ? "" : fraction * 100 + "%" } }), h("span", { class: "label" }, label));
  }

  function jobRow(job, refresh) {
    const started = fromNano(job.started_unix_nano);
    const ended = fromNano(job.ended_unix_nano);
    const seconds = started ? ((ended || new Date()).getTime() - started.getTime()) / 1000 : null;
    const live = job.state === "running" || job.state === "queued";
    return h("div", { class: "job", "data-job": job.job_id, "data-state": job.state },
      h("div", { class: "line" }, chip(job.state, "state state-" + known(job.state, ["queued", "running", "finished", "failed"])),
        h("b", null, job.trigger === "schedule" ? "scheduled run" : "run started here"),
        job.run_id ? h("a", { href: "#/runs/" + enc(job.run_id) }, h("code", null, job.run_id)) : h("span", { class: "muted" }, "no run id yet"),
        h("span", { class: "grow" }),
        h("span", { class: "muted small" }, started ? `${live ? "running for" : "took"} ${duration(seconds)}` : "queued"),
        live && offers("/jobs/{job_id}/stop", "post") ? h("button", {
          type: "button", class: "danger", onclick: async (event) => {
            event.target.disabled = true;
            try {
              await post(`/jobs/${enc(job.job_id)}/stop`);
            } catch (error) {
              alert(error.message);
            }
            refresh();
          },
        }, "Stop") : null),
      progress(job),
      job.error ? notice("error", job.error) : null);
  }

  async function viewRuns({ gen }) {
    const jobsBox = h("div", { id: "jobs" });
    const scheduleBox = h("div", { id: "schedule" });
    const historyBox = h("div", { id: "history" });
    const message = h("div", { id: "start-message" });
    const budget = h("input", { id: "budget", name: "budget", placeholder: "default budget", size: 14, autocomplete: "off" });
    let lastFinished = -1;

    async function refresh() {
      if (gen !== current) return;
      let status;
      try {
        status = await get("/status");
      } catch (error) {
        if (error.status === 401) {
          failed(gen, error);
          return;
        }
        jobsBox.replaceChildren(notice("error", error.message));
        later(gen, refresh, 5000);
        return;
      }
      const jobs = status.jobs || [];
      const live = jobs.some((j) => j.state === "running" || j.state === "queued");
      jobsBox.replaceChildren(...(jobs.length ? jobs.map((j) => jobRow(j, refresh))
        : [h("p", { class: "muted" }, "No run has been started by this service since it started.")]));
      scheduleBox.replaceChildren((status.schedule || []).length
        ? table(["job", "schedule", "next run"], status.schedule.map((j) => h("tr", { "data-job": j.name }, h("td", null, j.name), h("td", null, h("code", null, j.schedule)),
          h("td", null, j.next_run ? `${when(new Date(j.next_run))} (${relative(new Date(j.next_run))})` : "–"))))
        : h("p", { class: "muted" }, "Nothing is scheduled. Set generate_cron (TRACEMILL_GENERATE_CRON) to generate nightly."));
      const finished = jobs.filter((j) => j.state !== "running" && j.state !== "queued").length;
      if (finished !== lastFinished) {
        if (lastFinished >= 0) refreshService(); // the header's run indicator, at once
        lastFinished = finished;
        await history();
      }
      later(gen, refresh, live ? 1000 : 5000);
    }

    async function history() {
      let runs;
      try {
        runs = await get("/runs");
      } catch (error) {
        historyBox.replaceChildren(notice("error", error.message));
        return;
      }
      historyBox.replaceChildren(runs.length ? table(["run", "state", "agent", "stop reason", "rollouts", "failed", "fail rate", "started"],
        runs.map((r) => h("tr", { "data-run": r.run_id },
          h("td", null, h("a", { href: "#/runs/" + enc(r.run_id) }, h("code", null, r.run_id))),
          h("td", null, chip(r.state || "–", "state state-" + known(r.state, ["running", "finished", "failed", "interrupted"]))),
          h("td", null, r.agent), h("td", null, r.stop_reason || "–"), h("td", { class: "num" }, num(r.rollouts)),
          h("td", { class: "num" }, num(r.failed)), h("td", { class: "num" }, r.rollouts ? pct(r.failed / r.rollouts) : "–"),
          h("td", null, r.started ? String(r.started) + " UTC" : "–"))))
        : h("p", { class: "muted" }, "No generation run is recorded in this store."));
    }

    const start = offers("/runs", "post") ? h("form", {
      class: "row", onsubmit: async (event) => {
        event.preventDefault();
        const button = event.target.querySelector("button");
        button.disabled = true;
        message.replaceChildren();
        try {
          const job = await post("/runs", { budget: budget.value.trim() || null });
          message.replaceChildren(notice("good", `Started (job ${job.job_id}, budget ${job.budget}).`));
          refreshService();
        } catch (error) {
          if (error.status === 401) {
            failed(gen, error);
            return;
          }
          message.replaceChildren(notice("error", error.message));
        }
        button.disabled = false;
        timers.forEach(clearTimeout);
        timers = [];
        refresh();
      },
    }, h("label", { for: "budget" }, "Budget"), budget, h("button", { type: "submit", class: "primary", id: "start-run" }, "Start a run"),
    h("span", { class: "muted small" }, "200 (rollouts), '50k tokens' or '$5'")) : unavailable("Starting a run", "POST /api/v1/runs");

    show(gen, h("div", { class: "pagehead" }, h("div", null, h("h1", null, "Generation runs"),
      h("p", { class: "muted" }, "Runs simulate the map's failing situations within a budget and grade what comes back."))),
    h("div", { class: "cols" },
      section("Now", jobsBox, start, message),
      section("Schedule", scheduleBox)),
    section("History", historyBox));
    await refresh();
  }

  /** The first ``shown`` items, and a button for the rest. */
  function capped(items, render, shown) {
    const box = h("div", null, items.slice(0, shown).map(render));
    if (items.length > shown) {
      const more = h("button", {
        type: "button", class: "more", onclick: () => {
          more.remove();
          box.append(...items.slice(shown).map(render));
        },
      }, `Show all ${items.length}`);
      box.append(more);
    }
    return box;
  }

  /** A run's rollouts, one line each (the first ``shown``, and a button for the rest). */
  function rolloutTable(rollouts, shown) {
    const row = (r) => h("tr", { "data-rollout": r.rollout_id },
      h("td", null, h("a", { href: "#/rollout/" + enc(r.rollout_id) }, h("code", null, "#" + r.index))),
      h("td", null, outcomeChip(r.outcome)), h("td", null, r.failure_class || ""),
      h("td", null, r.purpose), h("td", null, r.situation),
      h("td", null, r.mutation || "–", " ", r.mutation_fired === false ? chip("did not fire", "bad") : null),
      h("td", { class: "num" }, num(r.turns)));
    const body = h("tbody", null, rollouts.slice(0, shown).map(row));
    const grid = h("table", { class: "grid" }, h("thead", null, h("tr", null,
      ["rollout", "outcome", "failure", "purpose", "aimed at", "mutation", "turns"].map((x) => h("th", null, x)))), body);
    if (rollouts.length <= shown) return grid;
    const more = h("button", {
      type: "button", class: "more", onclick: () => {
        more.remove();
        body.append(...rollouts.slice(shown).map(row));
      },
    }, `Show all ${rollouts.length}`);
    return h("div", null, grid, more);
  }

  function countsTable(title, counts) {
    const entries = Object.entries(counts || {});
    if (!entries.length) return null;
    return h("div", null, h("h3", null, title), table(["", ""], entries.sort((a, b) => b[1] - a[1]).map(([k, v]) =>
      h("tr", null, h("td", null, k), h("td", { class: "num" }, num(v)))), "compact"));
  }

  async function viewRun({ gen, args }) {
    const id = args[0];
    const [record, rollouts] = await Promise.all([
      get("/runs/" + enc(id)).catch((e) => e),
      get("/rollouts" + query({ run: id, limit: 500 })).catch((e) => e),
    ]);
    for (const answer of [record, rollouts]) if (answer instanceof ApiError && answer.status === 401) throw answer;
    const crumbs = h("nav", { class: "crumbs" }, h("a", { href: "#/runs" }, "Runs"), " / ", id);
    if (record instanceof ApiError) {
      show(gen, crumbs, notice(record.status === 404 ? "muted" : "error", record.message,
        record.status === 404 ? ". A run under way has its record once it ends; its progress is on the Runs page." : ""));
      return;
    }
    const b = record.budget || {};
    const kpi = (value, label) => h("div", { class: "kpi" }, h("b", null, value), h("span", null, label));
    show(gen, crumbs,
      h("div", { class: "pagehead" }, h("div", null, h("h1", null, "Run ", h("code", null, record.run_id)),
        h("p", { class: "muted" }, `agent ${record.agent} · seed ${record.seed} · stopped: ${record.stop_reason}`))),
      record.error ? notice("error", record.error) : null,
      (record.degraded || []).length ? notice("error", h("b", null, "Degraded: "), record.degraded.join("; ")) : null,
      h("div", { class: "kpis" }, kpi(num(record.planned), "planned"), kpi(num(record.written), "written"), kpi(num(record.graded), "graded"),
        kpi(num(record.failed), "failed"), kpi(record.graded ? pct(record.failed / record.graded) : "–", "fail rate"),
        kpi(duration(record.duration_s), "took")),
      h("div", { class: "cols" },
        section("Budget", facts([["kind", b.kind], ["limit", num(b.limit)], ["spent", num(b.spent)], ["tokens", num(b.tokens)],
          ["cost", b.usd !== undefined ? "$" + Number(b.usd).toFixed(2) : "–"], ["overruns", num(b.overruns)]])),
        section("Outcomes", h("div", { class: "cols" }, countsTable("failure classes", record.failure_classes), countsTable("ended by", record.ended_by), countsTable("purposes", record.purposes)))),
      (record.warnings || []).length ? section("Warnings", h("ul", null, record.warnings.map((w) => h("li", null, w)))) : null,
      (record.cells || []).length ? section("Situations aimed at", table(["cell", "status", "rollouts", "graded", "failed", "mutation did not fire"],
        record.cells.map((c) => h("tr", null, h("td", null, c.cell), h("td", null, c.status ? statusChip(c.status) : "–"), h("td", { class: "num" }, num(c.rollouts)),
          h("td", { class: "num" }, num(c.graded)), h("td", { class: "num" }, num(c.failed)), h("td", { class: "num" }, num(c.unfired)))))) : null,
      section("Rollouts", rollouts instanceof ApiError ? notice("error", rollouts.message)
        : rollouts.length ? rolloutTable(rollouts, 50) : h("p", { class: "muted" }, "No rollout stored.")));
  }

  // ------------------------------------------------------------------ reports

  async function viewReports({ gen, params }) {
    const since = params.get("since") || "";
    const route = since ? "/reports/regression" : "/reports/trace";
    if (!offers(route)) {
      show(gen, h("h1", null, "Reports"), unavailable(since ? "The regression report" : "The trace report", "GET /api/v1" + route),
        h("p", { class: "muted" }, "`tracemill report` writes the same report as Markdown, JSON and HTML."));
      return;
    }
    const answer = await get(route + query({ since }));
    const report = answer.report || answer; // {report, examples}, or the bare report
    const versions = report.versions || [];
    const latest = report.comparison && report.comparison.latest;
    const picker = offers("/reports/regression") ? h("label", null, "report ",
      h("select", { "data-filter": "since", onchange: (event) => { location.hash = "#/reports" + query({ since: event.target.value }); } },
        h("option", { value: "" }, "trace report (latest vs previous)"),
        versions.map((v) => v.version).filter((v) => v && v !== latest).map((v) => h("option", { value: v, selected: v === since }, `regression: ${latest} since ${v}`)))) : null;
    const download = h("a", {
      class: "button", download: `tracemill-report${since ? "-since-" + since : ""}.json`,
      href: URL.createObjectURL(new Blob([JSON.stringify(report, null, 2)], { type: "application/json" })),
    }, "Download JSON");
    const c = report.comparison || {};
    const byId = Object.fromEntries((report.situations || []).map((s) => [s.situation_id, s]));
    const head = h("div", { class: "pagehead" }, h("div", null, h("h1", null, since ? "Regression report" : "Trace report"),
      h("p", { class: "muted" }, c.mode === "versions" ? `Model version ${c.latest} against ${c.previous}` : `One model version (${c.latest || "–"}): later half against earlier half`,
        ` · written ${when(fromNano(report.generated_unix_nano))}`)),
    h("div", { class: "filters" }, picker, download));
    if (!(report.census || {}).conversations) {
      show(gen, head, notice("muted", "No conversation has been processed yet: the report has nothing to say. ",
        "Point the agent's OpenTelemetry exporter at this service; the map refreshes on its schedule."));
      return;
    }
    const none = (text) => h("p", { class: "muted" }, text);
    show(gen, head,
      (report.warnings || []).map((w) => notice("warn", w)),
      section("Summary", (report.summary || []).length ? h("ul", { class: "summary" }, report.summary.map((s) => h("li", null, s)))
        : none("Nothing fails more than the rest.")),
      h("div", { class: "cols" },
        section("Model versions", table(["version", "conversations", "graded", "failed", "fail rate"], versions.map((v) =>
          h("tr", null, h("td", null, v.version || "–"), h("td", { class: "num" }, num(v.conversations)), h("td", { class: "num" }, num(v.graded)),
            h("td", { class: "num" }, num(v.failed)), h("td", { class: "num" }, pct(v.fail_rate)))))),
        section("What the traces hold", facts(Object.entries(report.census || {}).map(([k, v]) => [k.replace(/_/g, " "), num(v)])))),
      !(report.situations || []).length ? section("Situations", none("No situation: nothing fails more than the rest.")) : section("Situations", table(["status", "situation", "previous", "latest", "change (95% CI)", ""], (report.situations || []).map((s) =>
        h("tr", null, h("td", null, statusChip(s.status)), h("td", null, h("a", { href: situationHref(s.situation_id) }, coordinates(s.coordinates))),
          h("td", null, rateText(s.previous), intervalBar(s.previous)), h("td", null, rateText(s.latest), intervalBar(s.latest)),
          h("td", null, changeText(s.difference), h("div", { class: "muted small" }, pText(s.p_value))),
          h("td", { class: "muted small" }, s.reason))))),
      (report.aims || []).length ? section("Where generation aims", table(["situation", "share of a run"], report.aims.filter((id) => byId[id]).map((id) =>
        h("tr", null, h("td", null, h("a", { href: situationHref(id) }, byId[id].label)), h("td", { class: "num" }, pct(byId[id].budget_share)))))) : null,
      section("Axes", h("div", { class: "axes" }, Object.entries(report.axes || {}).map(([axis, values]) => h("div", null, h("h3", null, axis),
        table(["value", "conversations", "failed / graded"], values.map((v) => h("tr", null, h("td", null, v.value), h("td", { class: "num" }, num(v.conversations)),
          h("td", { class: "num" }, `${num(v.failed)} / ${num(v.graded)}`))), "compact"))))));
  }

  // ------------------------------------------------------------------ start

  window.addEventListener("hashchange", render);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refreshService();
  });
  if (!location.hash) history.replaceState(null, "", "#/map");
  refreshService();
  render();
})();
