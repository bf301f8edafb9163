"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.NasSimulator = void 0;
/**
 * A NAS that speaks RFC 5176 over UDP, for tests and `bench:coa`. It checks each request's Request
 * Authenticator with the shared secret (a request that fails is dropped silently, as a router
 * does), then answers ACK, NAK with an Error-Cause, or nothing, after a configurable latency.
 * Retransmissions (same source, identifier and authenticator) are recognised: ignored while the
 * first copy is being answered, answered again from the cache afterwards (RFC 5080 section 2.2.2).
 */
const node_dgram_1 = __importDefault(require("node:dgram"));
const codec_1 = require("../../services/network-access/coa/codec");
class NasSimulator {
    options;
    stats = { received: 0, duplicates: 0, invalid: 0, answered: 0, silent: 0, inFlight: 0, peakInFlight: 0, firstAt: 0, lastAt: 0, heldMs: 0 };
    /** Every distinct request, in arrival order. */
    requests = [];
    // A large receive buffer (Linux caps it at net.core.rmem_max) so a burst is not dropped by the kernel.
    socket = node_dgram_1.default.createSocket({ type: 'udp4', recvBufferSize: 4 << 20 });
    /** Reply per (source, identifier, authenticator); `null` while being answered or when silent. */
    replies = new Map();
    seenPerUser = new Map();
    timers = new Set();
    port = 0;
    constructor(options) {
        this.options = options;
        this.socket.on('message', (msg, from) => this.onMessage(msg, from));
        this.socket.on('error', () => undefined);
    }
    async start() {
        await new Promise((resolve) => this.socket.bind(this.options.port ?? 0, this.options.host ?? '127.0.0.1', () => resolve()));
        this.port = this.socket.address().port;
        return this;
    }
    async stop() {
        for (const t of this.timers)
            clearTimeout(t);
        this.timers.clear();
        await new Promise((resolve) => this.socket.close(() => resolve()));
    }
    resetStats() {
        Object.assign(this.stats, { received: 0, duplicates: 0, invalid: 0, answered: 0, silent: 0, inFlight: 0, peakInFlight: 0, firstAt: 0, lastAt: 0, heldMs: 0 });
        this.requests.length = 0;
        this.replies.clear();
        this.seenPerUser.clear();
    }
    onMessage(msg, from) {
        if (msg.length < 20)
            return;
        const key = `${from.address}:${from.port}:${msg[1]}:${msg.subarray(4, 20).toString('hex')}`;
        if (this.replies.has(key)) {
            this.stats.duplicates++;
            const cached = this.replies.get(key);
            if (cached)
                this.socket.send(cached, from.port, from.address);
            return;
        }
        let decoded;
        try {
            decoded = (0, codec_1.decodeRequest)(msg, this.options.secret);
        }
        catch {
            this.stats.invalid++;
            return;
        }
        if (decoded.code !== 'Disconnect-Request' && decoded.code !== 'CoA-Request')
            return;
        this.stats.received++;
        const receivedAt = performance.now();
        if (!this.stats.firstAt)
            this.stats.firstAt = receivedAt;
        const req = toSimRequest(decoded, this.seenPerUser);
        this.requests.push(req);
        this.replies.set(key, null);
        const answer = this.options.answer?.(req) ?? 'ack';
        if (answer === 'silent') {
            this.stats.silent++;
            return;
        }
        this.stats.inFlight++;
        if (this.stats.inFlight > this.stats.peakInFlight)
            this.stats.peakInFlight = this.stats.inFlight;
        const codes = codec_1.REPLY_CODES[req.code];
        const reply = answer === 'ack'
            ? (0, codec_1.encodeReply)(decoded, codes.ack, this.options.secret)
            : (0, codec_1.encodeReply)(decoded, codes.nak, this.options.secret, answer.nak);
        const latency = typeof this.options.latencyMs === 'function' ? this.options.latencyMs(req) : this.options.latencyMs ?? 0;
        const timer = setTimeout(() => {
            this.timers.delete(timer);
            this.stats.inFlight--;
            this.stats.answered++;
            this.stats.lastAt = performance.now();
            this.stats.heldMs += this.stats.lastAt - receivedAt;
            this.replies.set(key, reply);
            this.socket.send(reply, from.port, from.address);
        }, latency);
        this.timers.add(timer);
    }
}
exports.NasSimulator = NasSimulator;
function toSimRequest(decoded, seenPerUser) {
    const a = decoded.attributes;
    const userName = String(a['User-Name'] ?? '');
    const seen = (seenPerUser.get(userName) ?? 0) + 1;
    seenPerUser.set(userName, seen);
    const vsa = a['Vendor-Specific'];
    return {
        code: decoded.code,
        userName,
        acctSessionId: a['Acct-Session-Id'],
        framedIp: a['Framed-IP-Address'],
        rateLimit: vsa?.['Mikrotik-Rate-Limit'],
        seen,
    };
}
//# sourceMappingURL=nas-simulator.js.map