/**
 * The connection hold of node-routeros as compat.ts replaces it: keepalives while the connection is
 * open, none once it is gone, and timers that never keep the process alive by themselves.
 */
import { Channel, RouterOSAPI } from 'node-routeros';
import { applyRouterOsCompat } from '../../services/network-access/routeros/compat';

interface Held {
  connected: boolean;
  connectionHoldInterval?: NodeJS.Timeout;
  holdConnection(): void;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

it('sends keepalives only while the connection is open, on timers that do not hold the process', async () => {
  applyRouterOsCompat();
  const write = jest.spyOn(Channel.prototype, 'write').mockResolvedValue([]);
  try {
    // A connection as the library leaves it once logged in, with a 20 ms idle timeout (10 ms hold).
    const api: Held = Object.assign(Object.create(RouterOSAPI.prototype), {
      channelsOpen: 1, connected: true, closing: false, holdingConnectionWithKeepalive: false, connector: {}, timeout: 0.02,
    });
    api.holdConnection();
    expect(api.connectionHoldInterval!.hasRef()).toBe(false);
    await tick(60);
    expect(write.mock.calls.length).toBeGreaterThan(0);
    expect(write.mock.calls.every(([words]) => JSON.stringify(words) === '["#"]')).toBe(true);

    api.connected = false;
    await tick(20);
    const sent = write.mock.calls.length;
    await tick(60);
    expect(write.mock.calls.length).toBe(sent);
  } finally {
    write.mockRestore();
  }
});
