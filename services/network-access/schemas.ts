/** Request and response schemas of the network-access endpoints (validated and documented by the gateway). */
import type { JsonSchema } from '../../shared/http/route';
import { object, type Infer } from '../../shared/http/schemas';

export const PING_MAX_COUNT = 20;
export const TORCH_MAX_SECONDS = 10;

export const pingBody = object({
  count: { type: 'integer', minimum: 1, maximum: PING_MAX_COUNT, default: 4 },
  size: { type: 'integer', minimum: 28, maximum: 1500, default: 64 },
});
export type PingInput = Infer<typeof pingBody>;

export const torchQuery = object({
  duration: { type: 'integer', minimum: 1, maximum: TORCH_MAX_SECONDS, default: 3 },
});
export type TorchInput = Infer<typeof torchQuery>;

const int: JsonSchema = { type: 'integer' };
const str: JsonSchema = { type: 'string' };
const nullable = (s: JsonSchema): JsonSchema => ({ ...s, type: [s.type as string, 'null'] });
const nasRef: JsonSchema = {
  type: ['object', 'null'],
  properties: { id: int, name: str, ip_address: str },
};
const OUTCOMES = ['disconnected', 'applied', 'offline', 'rejected', 'kicked', 'failed'];

export const sessionResultSchema: JsonSchema = {
  type: 'object',
  properties: {
    session_id: str,
    ip_address: nullable(str),
    nas: nasRef,
    nas_ip: str,
    outcome: { type: 'string', enum: OUTCOMES },
    via: {
      type: ['string', 'null'],
      enum: ['coa', 'api', null],
      description: 'coa: the NAS answered; api: CoA went unanswered and the router API acted',
    },
    error_cause: {
      type: ['object', 'null'],
      properties: { code: int, name: str },
      description: 'RFC 5176 Error-Cause of a NAK',
    },
    attempts: { type: 'integer', description: 'CoA transmissions, retransmissions included' },
    rtt_ms: nullable({ type: 'number' }),
    detail: nullable(str),
  },
};

export const disconnectData: JsonSchema = {
  type: 'object',
  properties: {
    subscriber_id: int,
    username: str,
    outcome: {
      type: 'string',
      enum: ['disconnected', 'offline', 'rejected', 'kicked', 'failed'],
      description:
        'disconnected: the NAS acknowledged; offline: no live session (or the NAS has none: Error-Cause 503); ' +
        'rejected: the NAS refused with an Error-Cause; kicked: CoA unanswered, removed through the router API; failed: neither worked',
    },
    message: str,
    sessions: { type: 'array', items: sessionResultSchema },
  },
};

export const pingData: JsonSchema = {
  type: 'object',
  properties: {
    subscriber_id: int,
    username: str,
    nas: nasRef,
    address: { type: 'string', description: "the subscriber's current address, pinged from the access server" },
    sent: int,
    received: int,
    loss_percent: int,
    min_ms: nullable({ type: 'number' }),
    avg_ms: nullable({ type: 'number' }),
    max_ms: nullable({ type: 'number' }),
    replies: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          seq: int,
          time_ms: nullable({ type: 'number' }),
          size: nullable(int),
          ttl: nullable(int),
          status: nullable(str),
        },
      },
    },
    raw: { type: 'string', description: "the router's output, as its terminal prints it" },
  },
};

export const torchData: JsonSchema = {
  type: 'object',
  properties: {
    subscriber_id: int,
    username: str,
    nas: nasRef,
    interface: { type: 'string', description: 'the PPPoE session interface, <pppoe-username>' },
    duration_seconds: int,
    samples: int,
    download_bps: int,
    upload_bps: int,
    connections: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          protocol: str,
          src_address: str,
          src_port: nullable(int),
          dst_address: str,
          dst_port: nullable(int),
          download_bps: {
            type: 'integer',
            description: 'mean over the window, bits per second, towards the subscriber',
          },
          upload_bps: { type: 'integer', description: 'mean over the window, bits per second, from the subscriber' },
        },
      },
    },
  },
};

const bytesPoint = (key: string, description: string): JsonSchema => ({
  type: 'array',
  description,
  items: { type: 'object', properties: { [key]: str, download_bytes: int, upload_bytes: int } },
});

export const bandwidthData: JsonSchema = {
  type: 'object',
  properties: {
    subscriber_id: int,
    username: str,
    last_24h: bytesPoint(
      'hour',
      "24 hourly points (UTC hour start), oldest first; each session's octets spread over the time it covers",
    ),
    last_30d: bytesPoint('date', '30 daily points (UTC dates), oldest first, from daily_usage'),
    sessions: {
      type: 'array',
      description: 'the 20 most recent sessions, newest first',
      items: {
        type: 'object',
        properties: {
          session_id: str,
          started_at: nullable(str),
          stopped_at: nullable(str),
          online: { type: 'boolean' },
          duration_seconds: int,
          download_bytes: int,
          upload_bytes: int,
          avg_download_bps: int,
          avg_upload_bps: int,
          ip_address: nullable(str),
          nas_ip: str,
          terminate_cause: nullable(str),
        },
      },
    },
  },
};

export const reconcileBody = object({
  dry_run: {
    type: 'boolean',
    default: false,
    description: 'true: compare and report, change nothing (no session closed, none removed)',
  },
});
export type ReconcileInput = Infer<typeof reconcileBody>;

const MISMATCH_REASONS = ['not_in_accounting', 'deleted', 'inactive', 'blocked'];

export const reconcileData: JsonSchema = {
  type: 'object',
  properties: {
    nas: { type: 'object', properties: { id: int, name: str, ip_address: str } },
    dry_run: { type: 'boolean' },
    router_sessions: { type: 'integer', description: 'entries of the router’s /ppp/active' },
    open_sessions: { type: 'integer', description: 'open radacct rows of the access server’s address' },
    ghosts: {
      type: 'array',
      description: 'open in accounting, absent on the router: closed as Lost-Service (closed: false in a dry run)',
      items: {
        type: 'object',
        properties: {
          username: nullable(str),
          session_id: str,
          ip_address: nullable(str),
          started_at: nullable(str),
          last_update_at: nullable(str),
          closed: { type: 'boolean' },
        },
      },
    },
    unwanted: {
      type: 'array',
      description:
        'on the router and not to be: absent from accounting (older than the grace), or of a deleted, inactive or (blocked_access reject) blocked subscriber; removed through the API',
      items: {
        type: 'object',
        properties: {
          username: str,
          address: nullable(str),
          router_id: str,
          uptime_seconds: nullable(int),
          reason: { type: 'string', enum: MISMATCH_REASONS },
          subscriber_id: nullable(int),
          removed: { type: 'boolean' },
          detail: nullable(str),
        },
      },
    },
  },
};
