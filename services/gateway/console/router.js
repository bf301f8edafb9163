/** Hash routes (`#/subscribers/12?tab=...`): the server serves one page at `/`, the rest is here. */
import { useEffect, useState } from 'preact/hooks';

function currentRoute() {
  const [path, qs] = location.hash.replace(/^#/, '').split('?');
  return { path: path || '/', query: Object.fromEntries(new URLSearchParams(qs ?? '')) };
}

export function href(path, query = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return `#${path}${s ? `?${s}` : ''}`;
}

export function go(path, query) {
  location.hash = href(path, query);
}

export function useRoute() {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const update = () => setRoute(currentRoute());
    addEventListener('hashchange', update);
    // A redirect made while this component first rendered (the start page sending the caller to
    // its first page) fired its hashchange before this listener existed.
    update();
    return () => removeEventListener('hashchange', update);
  }, []);
  return route;
}

/** `match('/subscribers/:id', '/subscribers/12')` gives `{ id: '12' }`, or null. */
export function match(pattern, path) {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return null;
  const params = {};
  for (let i = 0; i < p.length; i++) {
    if (p[i].startsWith(':')) params[p[i].slice(1)] = decodeURIComponent(s[i]);
    else if (p[i] !== s[i]) return null;
  }
  return params;
}
