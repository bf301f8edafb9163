/** A session row of session-list.ts as the API shows it (numbers as numbers, times as ISO strings). */
import type { SessionRow } from './session-list';

const num = (v: string | null) => (v === null ? null : Number(v));

export function sessionJson(r: SessionRow) {
  return {
    id: Number(r.id),
    subscriber_id: r.subscriber_id,
    username: r.username,
    service_id: r.service_id,
    reseller_id: r.reseller_id,
    nas_id: r.nas_id,
    nas_name: r.nas_name,
    nas_ip: r.nas_ip,
    framed_ip: r.framed_ip,
    mac: r.mac,
    started_at: r.started_at?.toISOString() ?? null,
    duration: num(r.duration),
    bytes_in: Number(r.bytes_in),
    bytes_out: Number(r.bytes_out),
    last_update_at: r.last_update_at?.toISOString() ?? null,
    interim_age: num(r.interim_age),
  };
}
