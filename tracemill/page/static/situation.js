import { capped, chip, coordinates, enc, h, notice, statusChip, unavailable } from "./dom.js";
import { changeText, intervalBar, num, pText, pct, rateText } from "./format.js";
import { ApiError, get, offers, query } from "./api.js";
import { show } from "./page.js";
import { conversationBody, conversationItem, rolloutBody, rolloutItem } from "./transcript.js";
import { periodKey, situationHref } from "./map.js";

// One situation: its periods and, side by side, its production conversations and the
// rollouts generated for it; and the pages of one conversation and one rollout.

function periodCard(title, period) {
  return h("div", { class: "period" }, h("div", { class: "muted small" }, title),
    h("div", { class: "big" }, period && period.graded ? pct(period.fail_rate) : "–"),
    h("div", { class: "small" }, rateText(period)), intervalBar(period),
    period && period.baseline !== null && period.baseline !== undefined
      ? h("div", { class: "muted small" }, `rest of this period: ${pct(period.baseline)}`) : null);
}

export async function viewSituation({ gen, args, params }) {
  const id = args[0];
  const version = params.get("version") || "";
  const outcome = params.get("outcome") || "";
  const since = params.get("since") || ""; // the map compared the latest with this version
  const mapHref = "#/map" + query({ since });
  let situation;
  try {
    situation = await get("/map/situations/" + enc(id) + query({ since }));
  } catch (error) {
    if (error.status !== 404) throw error;
    show(gen, notice("error", `No situation ${id} in the failure map: the map may have changed at its last refresh. `, h("a", { href: mapHref }, "Back to the map.")));
    return;
  }
  let [conversations, rollouts] = await Promise.all([
    get("/conversations" + query({ situation: id, version, outcome, limit: 50 })).catch((e) => e),
    offers("/rollouts") ? get("/rollouts" + query({ situation: id, limit: 50 })).catch((e) => e) : Promise.resolve(null),
  ]);
  for (const answer of [conversations, rollouts]) if (answer instanceof ApiError && answer.status === 401) throw answer;
  if (since && Array.isArray(conversations) && !conversations.length && situation.member_ids.length) {
    // a situation only this comparison finds (the stored map has no members for it):
    // its first members, one by one
    const found = await Promise.all(situation.member_ids.slice(0, 50).map((m) => get("/conversations/" + enc(m)).catch(() => null)));
    conversations = found.filter((c) => c && (!version || c.model_version === version) && (!outcome || c.outcome === outcome));
  }
  const versions = [situation.previous.version, situation.latest.version].filter((v, i, all) => v && all.indexOf(v) === i);
  const link = (next) => "#/situation/" + enc(id) + query({ version, outcome, since, ...next });
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
    h("nav", { class: "crumbs" }, h("a", { href: mapHref }, "Failure map", since ? ` (latest vs ${since})` : ""), " / ", situation.situation_id),
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

export async function viewConversation({ gen, args }) {
  const c = await get("/conversations/" + enc(args[0]));
  show(gen, h("nav", { class: "crumbs" }, h("a", { href: "#/map" }, "Failure map"), " / ",
    (c.situations || []).map((s) => [h("a", { href: situationHref(s) }, s), " / "]), c.conversation_id),
  h("h1", null, "Conversation ", h("code", null, c.conversation_id)),
  h("section", { class: "panel" }, conversationBody(c)));
}

export async function viewRollout({ gen, args }) {
  const r = await get("/rollouts/" + enc(args[0]));
  show(gen, h("nav", { class: "crumbs" }, h("a", { href: "#/runs" }, "Runs"), " / ",
    h("a", { href: "#/runs/" + enc(r.run_id) }, r.run_id), " / ", r.rollout_id,
    r.situation_id ? [" · ", h("a", { href: situationHref(r.situation_id) }, "its situation")] : null),
  h("h1", null, "Rollout ", h("code", null, r.rollout_id)),
  h("section", { class: "panel" }, rolloutBody(r)));
}
