// tracemill's web page: the failure map, version comparison, runs and reports, read from
// the admin API (/api/v1). Plain JavaScript modules, no build step, no dependencies: this
// entry routes the URL's #fragment to a view module and keeps the service line fresh.
//
// Every value from the API is put into the page as text (dom.js's h() makes text nodes,
// never HTML): conversation text is written by whoever talks to the agent. The admin
// token, when the service asks for one, is kept in this tab's sessionStorage and sent as
// an Authorization header (api.js); it never goes into a URL.
import { h, notice } from "./dom.js";
import { num, relative, when } from "./format.js";
import { TOKEN_KEY, forgetSpec, get, loadSpec, specWanted } from "./api.js";
import { failed, isCurrent, newGeneration, show } from "./page.js";
import { viewMap } from "./map.js";
import { viewConversation, viewRollout, viewSituation } from "./situation.js";
import { viewCompare } from "./compare.js";
import { viewRun, viewRuns } from "./runs.js";
import { viewReports } from "./reports.js";

const serviceBox = document.getElementById("service");

// ids (conversations, rollouts) may hold any character, "/" included: the last pattern
// group takes the rest of the path, percent-encoded as the page writes its links
const ROUTES = [
  [/^\/map$/, "map", viewMap],
  [/^\/situation\/(.+)$/, "map", viewSituation],
  [/^\/compare$/, "compare", viewCompare],
  [/^\/runs$/, "runs", viewRuns],
  [/^\/runs\/(.+)$/, "runs", viewRun],
  [/^\/reports$/, "reports", viewReports],
  [/^\/conversation\/(.+)$/, "map", viewConversation],
  [/^\/rollout\/(.+)$/, "map", viewRollout],
];

async function render() {
  const gen = newGeneration();
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
      if (specWanted()) await loadSpec();
      await view({ gen, args: match.slice(1).map(decodeURIComponent), params });
    } catch (error) {
      if (isCurrent(gen)) failed(gen, error);
    }
    return;
  }
  show(gen, notice("error", "No page at ", h("code", null, "#" + raw), ". ", h("a", { href: "#/map" }, "Go to the failure map.")));
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
          forgetSpec();
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

// ------------------------------------------------------------------ start

window.addEventListener("hashchange", render);
window.addEventListener("tracemill:render", render);
window.addEventListener("tracemill:status", refreshService);
window.addEventListener("tracemill:token", () => {
  refreshService();
  render();
});
document.addEventListener("visibilitychange", () => {
  if (!document.hidden) refreshService();
});
if (!location.hash) history.replaceState(null, "", "#/map");
refreshService();
render();
