"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.applyRouterOsCompat = applyRouterOsCompat;
/**
 * node-routeros 1.6.9 is no longer maintained, and two of its reactions to a reply are thrown from
 * inside its socket 'data' handler, where nothing can catch them and the process dies:
 * - RouterOS 7.18+ answers a command with no rows with `!empty` (then `!done`); the library calls
 *   that an unknown reply and throws UNKNOWNREPLY.
 * - A reply for a tag nobody reads any more throws UNREGISTEREDTAG.
 * These two patches, applied once on import, turn `!empty` into "no rows" (the `!done` that
 * follows resolves the command with []) and drop a sentence for an unknown tag.
 *
 * A third replaces its connection hold (a `#` sent every half idle timeout while a command waits):
 * the library re-armed it after every write, failed ones included, so a keepalive in flight when
 * the connection closed went on every few seconds on a dead connection and kept the process alive
 * (in tests, jest's "worker failed to exit"). Ours stops once the connection is gone and does not
 * keep the process up: the socket does that while the connection lives.
 */
const node_routeros_1 = require("node-routeros");
let applied = false;
function applyRouterOsCompat() {
    if (applied)
        return;
    applied = true;
    const channel = node_routeros_1.Channel.prototype;
    const processPacket = channel.processPacket;
    channel.processPacket = function (packet) {
        if (packet[0] === '!empty')
            return;
        try {
            processPacket.call(this, packet);
        }
        catch (err) {
            // Any other reply word it does not know: fail this command, not the process.
            this.emit('trap', { message: `unexpected reply ${packet[0]}: ${err.message}` });
            this.close();
        }
    };
    const receiver = node_routeros_1.Receiver.prototype;
    const sendTagData = receiver.sendTagData;
    receiver.sendTagData = function (tag) {
        if (this.tags.has(tag))
            sendTagData.call(this, tag);
        else
            this.cleanUp();
    };
    const api = node_routeros_1.RouterOSAPI.prototype;
    api.holdConnection = function () {
        // As the library: only for the first channel, and not when a keepalive already holds it.
        if (this.channelsOpen !== 1 || !this.connected || this.holdingConnectionWithKeepalive)
            return;
        clearTimeout(this.connectionHoldInterval);
        const hold = () => {
            this.connectionHoldInterval = setTimeout(() => {
                if (!this.connected || this.closing || !this.connector)
                    return;
                new node_routeros_1.Channel(this.connector).write(['#']).then(hold, hold);
            }, (this.timeout * 1000) / 2).unref();
        };
        hold();
    };
}
//# sourceMappingURL=compat.js.map