import { h } from "./dom.js";

// Numbers, rates, intervals, times and the heat colour scale, as the page shows them.

const numberFormat = new Intl.NumberFormat("en-US");
export const num = (x) => (x === null || x === undefined ? "–" : numberFormat.format(x));

export function pct(rate) {
  if (rate === null || rate === undefined) return "–";
  const value = rate * 100;
  return (value > 0 && value < 10 ? value.toFixed(1) : value.toFixed(0)) + "%";
}

export function rateText(period) {
  if (!period || !period.graded) return "not graded";
  const interval = period.interval ? ` [${pct(period.interval.low)}, ${pct(period.interval.high)}]` : "";
  return `${period.failed}/${period.graded} = ${pct(period.fail_rate)}${interval}`;
}

function points(x) {
  const value = Math.round(x * 100);
  return (value > 0 ? "+" : "") + value;
}

export function changeText(difference) {
  if (!difference) return "–";
  return `${points(difference.low)} to ${points(difference.high)} pts`;
}

export function pText(p) {
  if (p === null || p === undefined) return "–";
  return p < 0.001 ? "p < 0.001" : "p = " + p.toFixed(3);
}

export function fromNano(nano) {
  return nano ? new Date(Number(nano) / 1e6) : null;
}

export function when(date) {
  if (!date || Number.isNaN(date.getTime())) return "–";
  return date.toISOString().replace("T", " ").slice(0, 19) + " UTC";
}

export function duration(seconds) {
  if (seconds === null || seconds === undefined || Number.isNaN(seconds)) return "–";
  if (seconds < 60) return seconds.toFixed(seconds < 10 ? 1 : 0) + " s";
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min`;
  return `${Math.round(hours / 24)} days`;
}

export function relative(date) {
  if (!date) return "–";
  const seconds = (date.getTime() - Date.now()) / 1000;
  const size = duration(Math.abs(seconds));
  return seconds >= 0 ? "in " + size : size + " ago";
}

// white → yellow → orange → red → dark red, by fail rate
const HEAT = [[0, [248, 250, 252]], [0.1, [254, 243, 199]], [0.3, [253, 186, 116]],
  [0.55, [239, 68, 68]], [1, [127, 29, 29]]];

export function heat(rate) {
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
export function intervalBar(period) {
  if (!period || !period.graded || period.fail_rate === null) {
    return h("span", { class: "ibar none" }, "not graded");
  }
  const low = period.interval ? period.interval.low : period.fail_rate;
  const high = period.interval ? period.interval.high : period.fail_rate;
  return h("span", { class: "ibar", title: rateText(period) },
    h("span", { class: "span", style: { left: low * 100 + "%", width: Math.max(0.8, (high - low) * 100) + "%" } }),
    h("span", { class: "tick", style: { left: period.fail_rate * 100 + "%" } }));
}
