// Building the page: h() makes elements whose children from data are always text nodes,
// never HTML, and the small pieces every view uses (chips, tables, notices, expandables).
export const STATUSES = ["new", "persistent", "uncertain", "fixed", "passing"];
export const AXES = ["tool", "policy_rule", "user_stance", "world_state", "tool_condition", "history"];


/** An element; strings and numbers among the children become text nodes. */
export function h(tag, attrs, ...children) {
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

export const enc = encodeURIComponent;
export const known = (value, list) => (list.includes(value) ? value : "other");

export function chip(text, kind) {
  return h("span", { class: "chip " + (kind || "") }, text);
}

export function statusChip(status) {
  return chip(status, "status status-" + known(status, STATUSES));
}

export function outcomeChip(outcome) {
  const value = outcome || "ungraded";
  return chip(value === "pass" ? "passed" : value === "fail" ? "failed" : value,
    "outcome outcome-" + known(value, ["pass", "fail", "ungraded"]));
}

export function coordinates(list) {
  return h("span", { class: "coords" }, (list || []).map((c) =>
    h("span", { class: "coord" }, h("span", { class: "axis" }, c.axis), h("span", { class: "value" }, c.value))));
}

export function notice(kind, ...children) {
  return h("div", { class: "notice " + kind, role: kind === "error" ? "alert" : "status" }, ...children);
}

export function section(title, ...children) {
  return h("section", { class: "panel" }, h("h2", null, title), ...children);
}

export function table(headers, rows, cls) {
  return h("table", { class: "grid " + (cls || "") },
    h("thead", null, h("tr", null, headers.map((x) => h("th", null, x)))),
    h("tbody", null, rows));
}

export function unavailable(what, route) {
  return notice("muted", `${what} is not available from this service: it does not offer `,
    h("code", null, route), ". Upgrade the service, or use the command line.");
}

export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter((p) => p).map(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
}

export function expandable(summary, body, cls) {
  const details = h("details", { class: "item " + (cls || "") }, h("summary", null, summary));
  details.addEventListener("toggle", () => {
    if (details.open && details.children.length === 1) details.append(body());
  });
  return details;
}

export function capped(items, render, shown) {
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
