import { coordinates, facts, h, notice, section, statusChip, table, unavailable } from "./dom.js";
import { changeText, fromNano, intervalBar, num, pText, pct, rateText, when } from "./format.js";
import { get, offers, query } from "./api.js";
import { show } from "./page.js";
import { situationHref } from "./map.js";

// The Reports page: the trace report, or a regression report against a chosen version.

export async function viewReports({ gen, params }) {
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
