// Talking to the admin API (/api/v1): requests with the admin token, errors as ApiError,
// and the service's OpenAPI document, which says which routes it offers.
import { enc } from "./dom.js";

const API = "/api/v1";
export const TOKEN_KEY = "tracemill.admin-token";

export class ApiError extends Error {
  constructor(status, message, path) {
    super(message);
    this.status = status;
    this.path = path;
  }
}

let spec = null; // the OpenAPI document: which routes this service offers

async function request(method, path, body) {
  const headers = { Accept: "application/json" };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(API + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store", credentials: "omit", redirect: "error",
    });
  } catch (error) {
    throw new ApiError(0, `the service does not answer (${error.message}); is tracemill serve still running?`, path);
  }
  const text = await response.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch (_) {
    data = null;
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    if (data && typeof data.error === "string") message = data.error;
    else if (data && data.detail) message = JSON.stringify(data.detail);
    throw new ApiError(response.status, message, path);
  }
  return data;
}

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body);

/** Whether the OpenAPI document is still to be read (first page, or a new token). */
export function specWanted() {
  return spec === null;
}

/** Read the OpenAPI document again before the next page (a token was given or forgotten). */
export function forgetSpec() {
  spec = null;
}

export async function loadSpec() {
  try {
    spec = await get("/openapi.json");
  } catch (error) {
    if (error.status === 401) throw error;
    spec = null; // unknown: try every route and say so when one is missing
  }
}

/** Whether the service offers ``method template`` (true when its OpenAPI document is unknown). */
export function offers(template, method) {
  if (!spec || !spec.paths) return true;
  const item = spec.paths[API + template];
  return Boolean(item && (!method || item[method.toLowerCase()]));
}

export function query(params) {
  const pairs = Object.entries(params).filter(([, v]) => v !== null && v !== undefined && v !== "");
  return pairs.length ? "?" + pairs.map(([k, v]) => `${enc(k)}=${enc(v)}`).join("&") : "";
}
