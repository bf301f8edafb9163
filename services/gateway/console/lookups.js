/** Lists the forms pick from (plans, resellers, access servers), read once per sign-in. */
import { allPages } from './api.js';
import { session } from './session.js';

const cache = new Map();
session.onChange(() => cache.clear());

function cached(key, load) {
  if (!cache.has(key))
    cache.set(
      key,
      load().catch((err) => {
        cache.delete(key);
        throw err;
      }),
    );
  return cache.get(key);
}

export const forget = (key) => cache.delete(key);
export const plans = () => cached('plans', () => allPages('/api/services'));
/** Resellers in the token's tree; none for a `user` token (the API refuses it). */
export const resellers = () =>
  cached('resellers', () => (session.isAdminOrReseller ? allPages('/api/resellers') : Promise.resolve([])));
export const accessServers = () => cached('nas', () => (session.isAdmin ? allPages('/api/nas') : Promise.resolve([])));

export const options = (rows, text = (r) => r.name) =>
  rows.map((r) => ({ value: r.id, label: `${text(r)} (#${r.id})` }));
