/**
 * A NAS that speaks RFC 5176 over UDP, for tests and `bench:coa`. It checks each request's Request
 * Authenticator with the shared secret (a request that fails is dropped silently, as a router
 * does), then answers ACK, NAK with an Error-Cause, or nothing, after a configurable latency.
 * Retransmissions (same source, identifier and authenticator) are recognised: ignored while the
 * first copy is being answered, answered again from the cache afterwards (RFC 5080 section 2.2.2).
 */
import dgram from 'node:dgram';
import {
  decodeAttributes,
  decodeRequest,
  encodeReply,
  REPLY_CODES,
  type DecodedRequest,
  type RequestCode,
} from '../../services/network-access/coa/codec';

export type SimAnswer = 'ack' | 'silent' | { nak: number };

export interface SimRequest {
  code: RequestCode;
  userName: string;
  acctSessionId?: string;
  framedIp?: string;
  rateLimit?: string;
  /** Every attribute by dictionary name, in packet order, vendor attributes unpacked (codec's decodeAttributes). */
  attributes: [string, string][];
  /** The request as it arrived. */
  packet: Buffer;
  /** How many times this request (not counting retransmissions) was seen for this user name. */
  seen: number;
}

export interface NasSimulatorOptions {
  secret: string;
  host?: string;
  port?: number;
  latencyMs?: number | ((req: SimRequest) => number);
  answer?: (req: SimRequest) => SimAnswer;
  /** Each answer as it leaves: when its request arrived and when it was answered (performance.now()). */
  onAnswered?: (receivedAt: number, answeredAt: number) => void;
}

export interface NasSimulatorStats {
  received: number;
  duplicates: number;
  /** Requests whose authenticator did not verify with the secret (dropped). */
  invalid: number;
  answered: number;
  silent: number;
  inFlight: number;
  peakInFlight: number;
  /** performance.now() of the first request received and of the last answer sent. */
  firstAt: number;
  lastAt: number;
  /** Sum over answered requests of the time they were held (latency included): busy time x mean in flight. */
  heldMs: number;
}

export class NasSimulator {
  readonly stats: NasSimulatorStats = {
    received: 0,
    duplicates: 0,
    invalid: 0,
    answered: 0,
    silent: 0,
    inFlight: 0,
    peakInFlight: 0,
    firstAt: 0,
    lastAt: 0,
    heldMs: 0,
  };
  /** Every distinct request, in arrival order. */
  readonly requests: SimRequest[] = [];
  // A large receive buffer (Linux caps it at net.core.rmem_max) so a burst is not dropped by the kernel.
  private readonly socket = dgram.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
  /** Reply per (source, identifier, authenticator); `null` while being answered or when silent. */
  private readonly replies = new Map<string, Buffer | null>();
  private readonly seenPerUser = new Map<string, number>();
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  constructor(private readonly options: NasSimulatorOptions) {
    this.socket.on('message', (msg, from) => this.onMessage(msg, from));
    this.socket.on('error', () => undefined);
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) =>
      this.socket.bind(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve()),
    );
    this.port = this.socket.address().port;
    return this;
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    await new Promise<void>((resolve) => this.socket.close(() => resolve()));
  }

  resetStats(): void {
    Object.assign(this.stats, {
      received: 0,
      duplicates: 0,
      invalid: 0,
      answered: 0,
      silent: 0,
      inFlight: 0,
      peakInFlight: 0,
      firstAt: 0,
      lastAt: 0,
      heldMs: 0,
    });
    this.requests.length = 0;
    this.replies.clear();
    this.seenPerUser.clear();
  }

  private onMessage(msg: Buffer, from: dgram.RemoteInfo): void {
    if (msg.length < 20) return;
    const key = `${from.address}:${from.port}:${msg[1]}:${msg.subarray(4, 20).toString('hex')}`;
    if (this.replies.has(key)) {
      this.stats.duplicates++;
      const cached = this.replies.get(key);
      if (cached) this.socket.send(cached, from.port, from.address);
      return;
    }
    let decoded: DecodedRequest;
    try {
      decoded = decodeRequest(msg, this.options.secret);
    } catch {
      this.stats.invalid++;
      return;
    }
    if (decoded.code !== 'Disconnect-Request' && decoded.code !== 'CoA-Request') return;
    this.stats.received++;
    const receivedAt = performance.now();
    if (!this.stats.firstAt) this.stats.firstAt = receivedAt;
    const req = toSimRequest(decoded, msg, this.seenPerUser);
    this.requests.push(req);
    this.replies.set(key, null);
    const answer = this.options.answer?.(req) ?? 'ack';
    if (answer === 'silent') {
      this.stats.silent++;
      return;
    }
    this.stats.inFlight++;
    if (this.stats.inFlight > this.stats.peakInFlight) this.stats.peakInFlight = this.stats.inFlight;
    const codes = REPLY_CODES[req.code];
    const reply =
      answer === 'ack'
        ? encodeReply(decoded, codes.ack, this.options.secret)
        : encodeReply(decoded, codes.nak, this.options.secret, answer.nak);
    const latency =
      typeof this.options.latencyMs === 'function' ? this.options.latencyMs(req) : (this.options.latencyMs ?? 0);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.stats.inFlight--;
      this.stats.answered++;
      this.stats.lastAt = performance.now();
      this.stats.heldMs += this.stats.lastAt - receivedAt;
      this.options.onAnswered?.(receivedAt, this.stats.lastAt);
      this.replies.set(key, reply);
      this.socket.send(reply, from.port, from.address);
    }, latency);
    this.timers.add(timer);
  }
}

function toSimRequest(decoded: DecodedRequest, packet: Buffer, seenPerUser: Map<string, number>): SimRequest {
  const a = decoded.attributes;
  const userName = String(a['User-Name'] ?? '');
  const seen = (seenPerUser.get(userName) ?? 0) + 1;
  seenPerUser.set(userName, seen);
  const vsa = a['Vendor-Specific'] as Record<string, unknown> | undefined;
  return {
    code: decoded.code as RequestCode,
    userName,
    acctSessionId: a['Acct-Session-Id'] as string | undefined,
    framedIp: a['Framed-IP-Address'] as string | undefined,
    rateLimit: vsa?.['Mikrotik-Rate-Limit'] as string | undefined,
    attributes: decodeAttributes(packet),
    packet,
    seen,
  };
}
