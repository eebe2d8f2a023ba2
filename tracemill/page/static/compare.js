import { STATUSES, coordinates, h, known, notice, unavailable } from "./dom.js";
import { changeText, intervalBar, pText, pct } from "./format.js";
import { get, offers, query } from "./api.js";
import { show } from "./page.js";
import { comparisonLine, periodKey, situationHref } from "./map.js";

// The Versions page: situations in lanes (new, persistent, fixed), against the previous
// version or a chosen one.

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

export async function viewCompare({ gen, params }) {
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
