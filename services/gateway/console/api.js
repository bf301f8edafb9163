/**
 * Every call of the console goes through here: the public API, its `{ success, message }`
 * envelope, and one readable message per failure. GETs are retried on 503 (a unit restarting);
 * writes are not (money and access changes are retried by the operator, with the Retry button).
 */
import { session } from './session.js';

export class ApiError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }

  /** What the operator reads: the API's own message, prefixed with what the status means. */
  get explanation() {
    const m = this.message;
    switch (this.status) {
      case 0:
        return `The server cannot be reached (${m}). Check the connection and retry.`;
      case 400:
        return `Please check the form: ${m}.`;
      case 401:
        return this.sessionEnded ? 'Your session has ended. Please sign in again.' : `Sign-in refused: ${m}.`;
      case 402:
        return `Not enough balance: ${m}.`;
      case 403:
        return `Not allowed: ${m}.`;
      case 404:
        return `Not found: ${m}.`;
      case 409:
        return `Conflict: ${m}.`;
      case 413:
        return `Too large: ${m}.`;
      case 422:
        return `Nothing to do: ${m}.`;
      case 429:
        return `Too many requests. Please wait ${this.retryAfter ?? 'a few'} seconds and retry.`;
      case 503:
        return 'The service is unavailable right now. Retry in a moment.';
      case 504:
        return 'The server took too long to answer. Retry in a moment.';
      default:
        return `The server failed (${this.status}): ${m}.`;
    }
  }

  get retryable() {
    return this.status === 0 || this.status === 503 || this.status === 504 || this.status === 429;
  }
}

const GET_RETRIES = [500, 1500];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function queryString(query) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

async function once(method, path, { query, body, as } = {}) {
  const headers = { accept: as === 'blob' ? '*/*' : 'application/json' };
  if (session.token) headers.authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path + queryString(query), {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, err.message);
  }
  if (res.ok && as === 'blob') return res.blob();
  const type = res.headers.get('content-type') ?? '';
  const json = type.includes('application/json') ? await res.json().catch(() => null) : null;
  if (!res.ok) {
    const err = new ApiError(res.status, json?.message ?? res.statusText, res.headers.get('retry-after'));
    if (res.status === 401 && session.token) {
      err.sessionEnded = true;
      session.expire();
    }
    throw err;
  }
  // 202 and 200 alike: the caller reads the envelope (bulk actions tell them apart by `status`).
  return { status: res.status, ...(json ?? {}) };
}

/** `api('GET', '/api/subscribers', { query })` gives the envelope `{ status, success, data, ... }`. */
export async function api(method, path, options = {}) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await once(method, path, options);
    } catch (err) {
      const again = method === 'GET' && (err.status === 503 || err.status === 0) && attempt < GET_RETRIES.length;
      if (!again) throw err;
      await sleep(GET_RETRIES[attempt]);
    }
  }
}

/** Every row of a list, page by page (limit 500), for pickers and "all matching" selections. */
export async function allPages(path, query = {}, { max = 100000, onProgress } = {}) {
  const rows = [];
  for (let page = 1; rows.length < max; page++) {
    const res = await api('GET', path, { query: { ...query, page, limit: 500 } });
    rows.push(...res.data);
    onProgress?.(rows.length, res.pagination?.total);
    if (res.data.length < 500) break;
  }
  return rows.slice(0, max);
}
