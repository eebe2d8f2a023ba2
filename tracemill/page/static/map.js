import { AXES, STATUSES, coordinates, enc, h, known, notice, section, statusChip } from "./dom.js";
import { changeText, fromNano, heat, num, pText, pct, rateText, when } from "./format.js";
import { get, offers, query } from "./api.js";
import { show } from "./page.js";

// The Failure map page: situations as a heatmap by model version, and the pair cells
// behind them as an axis-by-axis grid. Helpers other views share (periodKey,
// situationHref, comparisonLine) live here too.

export function periodKey(situation, which) {
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

/** A situation's page; ``since``: the version the map compared the latest with. */
export function situationHref(id, version, since) {
  return "#/situation/" + enc(id) + query({ version, since });
}

function heatCell(situation, which, since) {
  const period = situation[which];
  if (!period || !period.graded) {
    return h("td", { class: "heat" }, h("span", { class: "cell empty", title: "no graded conversations" }, "–"));
  }
  const dark = period.fail_rate > 0.45;
  return h("td", { class: "heat" },
    h("a", {
      class: "cell" + (dark ? " dark" : ""),
      href: situationHref(situation.situation_id, period.version, since),
      title: `${situation.label}\n${period.version || periodKey(situation, which)}: ${rateText(period)}`,
      style: { background: heat(period.fail_rate) },
      "data-situation": situation.situation_id,
      "data-version": period.version || "",
    }, h("span", { class: "rate" }, pct(period.fail_rate)), h("span", { class: "n" }, `${period.failed}/${period.graded}`)));
}

function heatmap(situations, since) {
  const cols = columns(situations);
  const rows = situations.map((s) => {
    const cells = cols.map((key) => {
      if (periodKey(s, "previous") === key) return heatCell(s, "previous", since);
      if (periodKey(s, "latest") === key) return heatCell(s, "latest", since);
      return h("td", { class: "heat" }, h("span", { class: "cell empty" }, ""));
    });
    return h("tr", { "data-situation": s.situation_id },
      h("td", null, statusChip(s.status)),
      h("th", { scope: "row", class: "label" },
        h("a", { href: situationHref(s.situation_id, null, since) }, coordinates(s.coordinates)),
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

function statusCounts(situations, since) {
  const counts = {};
  for (const s of situations) counts[s.status] = (counts[s.status] || 0) + 1;
  return h("div", { class: "kpis" }, STATUSES.filter((s) => s !== "passing").map((s) =>
    h("a", { class: "kpi status-" + s, href: "#/map" + query({ status: s, since }) },
      h("b", null, String(counts[s] || 0)), h("span", null, s))));
}

/** The versions the latest may be compared with besides the one before it (GET /versions),
 * or null when the service does not list them. */
async function earlierVersions() {
  if (!offers("/versions")) return null;
  const versions = (await get("/versions")).map((v) => v.version).filter((v) => v);
  return { earlier: versions.slice(0, -2), previous: versions[versions.length - 2] };
}

export async function viewMap({ gen, params }) {
  const status = params.get("status") || "";
  const axis = params.get("axis") || "";
  const since = params.get("since") || "";
  const [situations, cells, known] = await Promise.all([
    get("/map" + query({ status, axis, since })),
    offers("/map/cells") ? get("/map/cells" + query({ since })).catch(() => null) : Promise.resolve(null),
    earlierVersions().catch(() => null),
  ]);
  const filter = (name, value, options, all, label) => h("label", null, label || name, " ",
    h("select", {
      "data-filter": name, onchange: (event) => {
        const next = { status, axis, since };
        next[name] = event.target.value;
        location.hash = "#/map" + query(next);
      },
    }, h("option", { value: "" }, all || "all"), options.map((o) => h("option", { value: o, selected: o === value }, o))));
  // which version the latest is compared with: the one before it (the stored map) or any
  // earlier one (computed for this page, as `tracemill map --since V`)
  const versionFilter = known && known.earlier.length
    ? filter("since", since, known.earlier, `${known.previous} (the version before it)`, "compare the latest with") : null;
  const head = h("div", { class: "pagehead" },
    h("div", null, h("h1", null, "Failure map"),
      h("p", { class: "muted" }, comparisonLine(situations))),
    h("div", { class: "filters" }, versionFilter,
      filter("status", status, STATUSES.filter((s) => s !== "passing")), filter("axis", axis, AXES)));
  if (!situations.length) {
    show(gen, head, notice("muted", status || axis
      ? "No situation matches these filters."
      : "The failure map is empty: no processed conversation fails in a situation the map can isolate yet. " +
        "The service refreshes the map on its schedule; `tracemill process` refreshes it by hand."));
    return;
  }
  const computed = fromNano(Math.max(...situations.map((s) => s.computed_unix_nano || 0)));
  show(gen, head, statusCounts(situations, since),
    section("Situations by model version", legend(), h("div", { class: "scroll" }, heatmap(situations, since)),
      h("p", { class: "muted small" }, `Worst first. Each cell: fail rate of the situation's graded conversations in that version (failed/graded); hover for the 95% interval. Computed ${when(computed)}.`)),
    cells ? cellGrid(cells, situations, params) : null);
}

export function comparisonLine(situations) {
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
  const since = params.get("since") || "";
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
    return h("td", { class: "heat" }, owner ? h("a", Object.assign(attrs, { href: situationHref(owner.situation_id, null, since) }), inner) : h("span", attrs, inner));
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
