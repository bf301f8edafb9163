"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.RouterOsClient = exports.pppoeInterface = exports.DEFAULT_ROUTEROS_OPTIONS = exports.RouterOsError = void 0;
const node_routeros_1 = require("node-routeros");
const compat_1 = require("./compat");
const parse_1 = require("./parse");
(0, compat_1.applyRouterOsCompat)();
class RouterOsError extends Error {
    kind;
    constructor(kind, message) {
        super(message);
        this.kind = kind;
        this.name = 'RouterOsError';
    }
}
exports.RouterOsError = RouterOsError;
exports.DEFAULT_ROUTEROS_OPTIONS = { connectTimeoutMs: 5000, commandTimeoutMs: 10_000, idleSeconds: 10, maxConcurrentCommands: 16 };
/** PPPoE server sessions show up on the router as a dynamic interface named like this. */
const pppoeInterface = (username) => `<pppoe-${username}>`;
exports.pppoeInterface = pppoeInterface;
class RouterOsClient {
    options;
    connections = new Map();
    constructor(options = {}) {
        this.options = { ...exports.DEFAULT_ROUTEROS_OPTIONS, ...options };
    }
    /** One command; resolves with its `!re` rows ([] for `!empty`), rejects with a RouterOsError. */
    async run(target, command, words = [], timeoutMs = this.options.commandTimeoutMs) {
        const conn = await this.connection(target);
        await this.turn(conn);
        if (conn.dead) {
            this.done(conn);
            throw new RouterOsError('closed', `connection to ${target.host} closed`);
        }
        return new Promise((resolve, reject) => {
            let settled = false;
            const settle = (fn) => {
                if (settled)
                    return;
                settled = true;
                clearTimeout(timer);
                conn.waiting.delete(fail);
                this.done(conn);
                fn();
            };
            const fail = (err) => settle(() => reject(err));
            const timer = setTimeout(() => {
                fail(new RouterOsError('timeout', `${command} got no answer within ${timeoutMs} ms`));
                // A router that stopped answering one command is not trusted with the next.
                void this.closeConnection(conn);
            }, timeoutMs);
            conn.waiting.add(fail);
            conn.api.write(command, words).then((rows) => settle(() => resolve(rows)), (err) => fail(new RouterOsError('trap', messageOf(err))));
        });
    }
    /**
     * Removes the subscriber's active PPP session(s) by name (`/ppp/active/remove`); the number
     * removed, 0 when the router has none.
     */
    async removePppSession(target, name) {
        const rows = await this.run(target, '/ppp/active/print', [`?name=${name}`, '=.proplist=.id']);
        let removed = 0;
        for (const row of rows) {
            try {
                await this.run(target, '/ppp/active/remove', [`=.id=${row['.id']}`]);
                removed++;
            }
            catch (err) {
                // Gone between print and remove (the client hung up on its own): that is the goal anyway.
                if (!(err instanceof RouterOsError && err.kind === 'trap' && /no such item/.test(err.message)))
                    throw err;
            }
        }
        return removed;
    }
    /** `/ping` from the router; `intervalMs` apart (RouterOS's own default is 1 s). */
    async ping(target, p) {
        const rows = await this.run(target, '/ping', [`=address=${p.address}`, `=count=${p.count}`, `=size=${p.size}`, `=interval=${p.intervalMs}ms`], p.count * p.intervalMs + this.options.commandTimeoutMs);
        return (0, parse_1.pingResult)(p.address, rows);
    }
    /** `/tool/torch` on an interface for `durationSeconds`, broken down per connection. */
    async torch(target, iface, durationSeconds) {
        const rows = await this.run(target, '/tool/torch', [
            `=interface=${iface}`, `=duration=${durationSeconds}s`, '=src-address=0.0.0.0/0', '=dst-address=0.0.0.0/0',
            '=ip-protocol=any', '=port=any',
        ], durationSeconds * 1000 + this.options.commandTimeoutMs);
        return (0, parse_1.torchResult)(iface, durationSeconds, rows);
    }
    async close() {
        const all = [...this.connections.values()];
        this.connections.clear();
        await Promise.all(all.map(async (pending) => {
            const conn = await pending.catch(() => undefined);
            if (conn)
                await this.closeConnection(conn);
        }));
    }
    // ---------------------------------------------------------------- connections
    /** A place among the connection's outstanding commands; a freed place passes to the next in line. */
    async turn(conn) {
        if (conn.active < this.options.maxConcurrentCommands) {
            conn.active++;
            return;
        }
        await new Promise((wake) => conn.queue.push(wake));
    }
    done(conn) {
        const next = conn.queue.shift();
        if (next)
            next();
        else
            conn.active--;
    }
    /** The shared connection to a router, opened when there is none or the last one failed. */
    async connection(target) {
        const key = keyOf(target);
        for (;;) {
            let pending = this.connections.get(key);
            if (!pending) {
                pending = this.open(target);
                this.connections.set(key, pending);
            }
            const forget = () => { if (this.connections.get(key) === pending)
                this.connections.delete(key); };
            let conn;
            try {
                conn = await pending;
            }
            catch (err) {
                forget();
                throw err;
            }
            if (!conn.dead)
                return conn;
            forget();
        }
    }
    async open(target) {
        const api = new node_routeros_1.RouterOSAPI({
            host: target.host, port: target.port, user: target.username, password: target.password, timeout: this.options.idleSeconds,
        });
        const conn = { api, waiting: new Set(), dead: false, active: 0, queue: [] };
        api.on('error', (err) => this.fail(conn, new RouterOsError('closed', `connection to ${target.host} failed: ${messageOf(err)}`)));
        api.on('close', () => this.fail(conn, new RouterOsError('closed', `connection to ${target.host} closed`)));
        let timer;
        try {
            await Promise.race([
                api.connect(),
                new Promise((_, reject) => {
                    timer = setTimeout(() => reject(new RouterOsError('connect', `no API connection to ${target.host}:${target.port} within ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
                }),
            ]);
        }
        catch (err) {
            conn.dead = true;
            destroy(api);
            if (err instanceof RouterOsError)
                throw err;
            const login = err?.errno === 'CANTLOGIN' || /invalid user name|cannot log in/i.test(messageOf(err));
            throw new RouterOsError(login ? 'login' : 'connect', `API ${target.host}:${target.port}: ${messageOf(err)}`);
        }
        finally {
            clearTimeout(timer);
        }
        // The library writes each word of a sentence separately: without this, Nagle's algorithm and
        // the router's delayed ACK add tens of milliseconds to every command.
        internals(api).connector?.socket?.setNoDelay(true);
        return conn;
    }
    fail(conn, err) {
        conn.dead = true;
        for (const reject of [...conn.waiting])
            reject(err);
    }
    async closeConnection(conn) {
        conn.dead = true;
        for (const reject of [...conn.waiting])
            reject(new RouterOsError('closed', 'connection closed'));
        // close() waits for the router to end the TCP session; one that never does is cut.
        await Promise.race([conn.api.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
        destroy(conn.api);
    }
}
exports.RouterOsClient = RouterOsClient;
function keyOf(t) {
    return `${t.host}:${t.port}:${t.username}`;
}
/** The library keeps its socket private: reached for no-delay and to abandon a connect in progress. */
function internals(api) {
    return api;
}
function destroy(api) {
    internals(api).connector?.destroy();
}
function messageOf(err) {
    if (err instanceof Error)
        return err.message || err.errno || err.name;
    return String(err);
}
//# sourceMappingURL=client.js.map