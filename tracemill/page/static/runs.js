import { chip, enc, facts, h, known, notice, outcomeChip, section, statusChip, table, unavailable } from "./dom.js";
import { duration, fromNano, num, pct, relative, when } from "./format.js";
import { ApiError, get, offers, post, query } from "./api.js";
import { clearTimers, failed, isCurrent, later, show, statusChanged } from "./page.js";

// The Runs page (what the service is running, its schedule, the history) and one run's
// record with its rollouts.

function budgetRollouts(budget) {
  const match = /^\s*(\d+)\s*(rollouts?)?\s*$/i.exec(budget || "");
  return match ? Number(match[1]) : null;
}

function progress(job) {
  const total = budgetRollouts(job.budget);
  const done = job.state === "finished";
  // finished counts rollouts as they end; rollouts (stored) lags by the rows not yet committed
  const count = Math.max(job.finished || 0, job.rollouts || 0);
  const fraction = total ? Math.min(1, count / total) : done ? 1 : null;
  const label = total ? `${count} / ${total} rollouts` : `${count} rollouts · budget ${job.budget}`;
  return h("div", {
    class: `progress ${known(job.state, ["queued", "running", "stopping", "finished", "failed", "stopped", "interrupted"])}${fraction === null ? " indeterminate" : ""}`,
    role: "progressbar", "aria-valuemin": "0", "aria-valuemax": total || "", "aria-valuenow": count, "aria-label": label,
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

export async function viewRuns({ gen }) {
  const jobsBox = h("div", { id: "jobs" });
  const scheduleBox = h("div", { id: "schedule" });
  const historyBox = h("div", { id: "history" });
  const message = h("div", { id: "start-message" });
  const budget = h("input", { id: "budget", name: "budget", placeholder: "default budget", size: 14, autocomplete: "off" });
  let lastFinished = -1;

  async function refresh() {
    if (!isCurrent(gen)) return;
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
      if (lastFinished >= 0) statusChanged(); // the header's run indicator, at once
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
        statusChanged();
      } catch (error) {
        if (error.status === 401) {
          failed(gen, error);
          return;
        }
        message.replaceChildren(notice("error", error.message));
      }
      button.disabled = false;
      clearTimers();
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

export async function viewRun({ gen, args }) {
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
