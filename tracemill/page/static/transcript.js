import { AXES, chip, coordinates, enc, expandable, facts, h, known, notice, outcomeChip } from "./dom.js";
import { fromNano, num, when } from "./format.js";

// Conversations and rollouts as readable transcripts (every value a text node), and the
// collapsed list items that open into them.

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

export function conversationBody(c) {
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
      ["link", h("a", { class: "permalink", href: "#/conversation/" + enc(c.conversation_id) }, "this conversation on its own page")],
    ]),
    c.content_missing ? notice("warn", "Some message content was not captured (capture was off).") : null,
    (c.errors || []).length ? notice("error", "Errors: ", c.errors.join("; ")) : null,
    (c.evaluations || []).length ? h("ul", { class: "evals" }, c.evaluations.map((e) =>
      h("li", null, e.passed === false ? chip("fail", "bad") : e.passed ? chip("pass", "good") : chip("–"), " ",
        h("b", null, e.name || "evaluation"), e.explanation ? ": " + e.explanation : ""))) : null,
    transcript(c.messages, results));
}

export function rolloutBody(r) {
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

export function conversationItem(c) {
  return expandable([
    h("div", { class: "line" }, outcomeChip(c.outcome), chip(c.model_version || "no version", "version"),
      h("code", { class: "id" }, c.conversation_id), h("span", { class: "grow" }),
      h("span", { class: "muted small" }, when(fromNano(c.start_unix_nano)))),
    h("div", { class: "ask" }, c.first_ask || "(first message not captured)"),
  ], () => conversationBody(c), "conversation");
}

export function rolloutItem(r) {
  return expandable([
    h("div", { class: "line" }, outcomeChip(r.outcome), chip(r.mutation || r.purpose, "version"),
      r.failure_class ? chip(r.failure_class, "bad") : null,
      h("code", { class: "id" }, r.rollout_id), h("span", { class: "grow" }),
      h("span", { class: "muted small" }, `${r.turns} turns`)),
    h("div", { class: "ask" }, r.goal && r.goal.ask ? r.goal.ask : r.mutation_detail || ""),
  ], () => rolloutBody(r), "rollout");
}
