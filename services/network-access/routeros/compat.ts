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
import { Channel, Receiver, RouterOSAPI } from 'node-routeros';

interface ChannelInternals {
  processPacket(packet: string[]): void;
  emit(event: string, ...args: unknown[]): boolean;
  close(): void;
}

interface ReceiverInternals {
  tags: Map<string, unknown>;
  sendTagData(tag: string): void;
  cleanUp(): void;
}

interface ApiInternals {
  channelsOpen: number;
  connected: boolean;
  closing: boolean;
  holdingConnectionWithKeepalive: boolean;
  connectionHoldInterval?: NodeJS.Timeout;
  connector: ConstructorParameters<typeof Channel>[0] | null;
  timeout: number;
}

let applied = false;

export function applyRouterOsCompat(): void {
  if (applied) return;
  applied = true;
  const channel = Channel.prototype as unknown as ChannelInternals;
  const processPacket = channel.processPacket;
  channel.processPacket = function (this: ChannelInternals, packet: string[]) {
    if (packet[0] === '!empty') return;
    try {
      processPacket.call(this, packet);
    } catch (err) {
      // Any other reply word it does not know: fail this command, not the process.
      this.emit('trap', { message: `unexpected reply ${packet[0]}: ${(err as Error).message}` });
      this.close();
    }
  };
  const receiver = Receiver.prototype as unknown as ReceiverInternals;
  const sendTagData = receiver.sendTagData;
  receiver.sendTagData = function (this: ReceiverInternals, tag: string) {
    if (this.tags.has(tag)) sendTagData.call(this, tag);
    else this.cleanUp();
  };
  const api = RouterOSAPI.prototype as unknown as { holdConnection(this: ApiInternals): void };
  api.holdConnection = function (this: ApiInternals) {
    // As the library: only for the first channel, and not when a keepalive already holds it.
    if (this.channelsOpen !== 1 || !this.connected || this.holdingConnectionWithKeepalive) return;
    clearTimeout(this.connectionHoldInterval);
    const hold = (): void => {
      this.connectionHoldInterval = setTimeout(
        () => {
          if (!this.connected || this.closing || !this.connector) return;
          new Channel(this.connector).write(['#']).then(hold, hold);
        },
        (this.timeout * 1000) / 2,
      ).unref();
    };
    hold();
  };
}
