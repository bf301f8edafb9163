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

// The hold is timer-driven: a fake clock makes "while open" and "once gone" exact.
beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

it('sends keepalives only while the connection is open, on timers that do not hold the process', async () => {
  applyRouterOsCompat();
  const write = jest.spyOn(Channel.prototype, 'write').mockResolvedValue([]);
  try {
    // A connection as the library leaves it once logged in, with a 20 ms idle timeout (10 ms hold).
    const api: Held = Object.assign(Object.create(RouterOSAPI.prototype), {
      channelsOpen: 1,
      connected: true,
      closing: false,
      holdingConnectionWithKeepalive: false,
      connector: {},
      timeout: 0.02,
    });
    api.holdConnection();
    expect(api.connectionHoldInterval!.hasRef()).toBe(false);
    await jest.advanceTimersByTimeAsync(60);
    expect(write.mock.calls.length).toBeGreaterThan(0);
    expect(write.mock.calls.every(([words]) => JSON.stringify(words) === '["#"]')).toBe(true);

    api.connected = false;
    const sent = write.mock.calls.length;
    await jest.advanceTimersByTimeAsync(60);
    expect(write.mock.calls.length).toBe(sent);
    expect(jest.getTimerCount()).toBe(0);
  } finally {
    write.mockRestore();
  }
});
