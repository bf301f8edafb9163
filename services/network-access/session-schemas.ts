/** Request schemas of the session lists (declared on the actions in sessions.service.ts). */
import { idSchema, object, paginationProperties, type Infer } from '../../shared/http/schemas';

export const TAG = 'sessions';

/** What a session list sorts by: every field it shows. */
export const SESSION_SORTS = [
  'started_at',
  'duration',
  'username',
  'subscriber_id',
  'nas',
  'framed_ip',
  'mac',
  'bytes_in',
  'bytes_out',
  'interim_age',
] as const;
export type SessionSort = (typeof SESSION_SORTS)[number];

const sortProperties = {
  sort: { type: 'string', enum: [...SESSION_SORTS], default: 'started_at' },
  order: { type: 'string', enum: ['desc', 'asc'], default: 'desc' },
} as const;

export const liveQuery = object({
  ...paginationProperties,
  ...sortProperties,
  nas_id: idSchema,
  service_id: idSchema,
  reseller_id: idSchema,
  search: { type: 'string', minLength: 1, maxLength: 100, description: 'part of the username, framed address or MAC' },
  stale: {
    type: 'boolean',
    description:
      'only sessions silent (no Interim-Update) for longer than 2 x accounting_interim_minutes + 1, or only the others',
  },
});
export type LiveSessionsInput = Infer<typeof liveQuery>;

export const closedQuery = object({ ...paginationProperties, ...sortProperties });
export type ClosedSessionsInput = Infer<typeof closedQuery>;

const nullableText = { type: ['string', 'null'] } as const;
const nullableInt = { type: ['integer', 'null'] } as const;
const nullableTime = { type: ['string', 'null'], format: 'date-time' } as const;

const sessionProperties = {
  id: { type: 'integer', description: 'radacct id' },
  subscriber_id: { ...nullableInt, description: 'null when no live subscriber has the username' },
  username: nullableText,
  service_id: nullableInt,
  reseller_id: nullableInt,
  nas_id: { ...nullableInt, description: 'null when the NAS address matches no registered access server' },
  nas_name: nullableText,
  nas_ip: { type: 'string' },
  framed_ip: nullableText,
  mac: { ...nullableText, description: 'Calling-Station-Id' },
  started_at: nullableTime,
  duration: { type: ['integer', 'null'], description: 'seconds: from start to now (live) or to stop (closed)' },
  bytes_in: { type: 'integer', description: 'Acct-Input-Octets: sent by the subscriber' },
  bytes_out: { type: 'integer', description: 'Acct-Output-Octets: sent to the subscriber' },
  last_update_at: nullableTime,
  interim_age: {
    type: ['integer', 'null'],
    description:
      'seconds since the last accounting packet (Interim-Update or Start), at now (live) or at stop (closed)',
  },
} as const;

export const liveSession = object({ ...sessionProperties, stale: { type: 'boolean' } });
export const closedSession = object({
  ...sessionProperties,
  stopped_at: nullableTime,
  terminate_cause: nullableText,
});
