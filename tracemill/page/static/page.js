// What every view shares: which rendering is current (a view that finishes after the
// user moved on must not draw), its timers, the <main> it draws into, and how a failed
// load is shown (the token form on a 401). The page's entry (app.js) listens for the
// events this module sends: "tracemill:render" (draw the current page again) and
// "tracemill:token" (a token was given: read the service again).
import { h, notice } from "./dom.js";
import { TOKEN_KEY, forgetSpec } from "./api.js";

const main = document.getElementById("main");
let current = 0;
let timers = [];

/** Start a new rendering: cancels the previous one's timers; returns its number. */
export function newGeneration() {
  clearTimers();
  return ++current;
}

/** Whether rendering ``gen`` is still the one on screen. */
export function isCurrent(gen) {
  return gen === current;
}

/** Cancel the current rendering's timers. */
export function clearTimers() {
  timers.forEach(clearTimeout);
  timers = [];
}

/** Ask the entry module to refresh the service line (run counts) now. */
export function statusChanged() {
  window.dispatchEvent(new Event("tracemill:status"));
}

const rerender = () => window.dispatchEvent(new Event("tracemill:render"));

/** Call ``fn`` after ``ms`` unless the user has moved to another page by then. */
export function later(gen, fn, ms) {
  if (gen !== current) return;
  timers.push(setTimeout(() => {
    if (gen === current) fn();
  }, ms));
}

export function show(gen, ...nodes) {
  if (gen !== current) return false;
  main.replaceChildren(...nodes.flat(Infinity).filter((node) => node !== null && node !== undefined && node !== false));
  return true;
}

export function failed(gen, error) {
  if (error.status === 401) {
    show(gen, tokenPrompt(error));
    return;
  }
  show(gen, notice("error", h("strong", null, "Could not load this page. "), error.message,
    " ", h("button", { type: "button", class: "link", onclick: rerender }, "Retry")));
}

// ------------------------------------------------------------------ the token

/** The form asking for the admin token (after a 401). */
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
      forgetSpec();
      window.dispatchEvent(new Event("tracemill:token"));
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
