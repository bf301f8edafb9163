/**
 * node-routeros 1.6.9 is no longer maintained, and two of its reactions to a reply are thrown from
 * inside its socket 'data' handler, where nothing can catch them and the process dies:
 * - RouterOS 7.18+ answers a command with no rows with `!empty` (then `!done`); the library calls
 *   that an unknown reply and throws UNKNOWNREPLY.
 * - A reply for a tag nobody reads any more throws UNREGISTEREDTAG.
 * These two patches, applied once on import, turn `!empty` into "no rows" (the `!done` that
 * follows resolves the command with []) and drop a sentence for an unknown tag.
 */
import { Channel, Receiver } from 'node-routeros';

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
}
