/**
 * A replica leaving while requests flow (a rolling upgrade, docs/operations.md) fails none of them
 * and runs none twice: brokers with the installation's options (moleculer.config.ts), a caller
 * standing for the gateway and two "billing" nodes, A and B, whose `pay` records every run.
 *
 * The race that answered 503 in `bench:upgrade` is made to happen every time instead of now and
 * then: the caller is held from reading A's "no services" notice (as a loaded gateway reads it
 * late), so it keeps sending to A while A refuses, being stopped. A request already running on A
 * is held open by the test, so A stays in that state until the test has seen the refusals.
 */
import crypto from 'node:crypto';
import { ServiceBroker, type Middleware } from 'moleculer';
import { brokerOptions, provablyUndelivered } from '../../moleculer.config';
import type { Config } from '../../shared/config';
import { FAKE, suiteTransporter } from '../helpers/transporter';
import { waitFor } from '../helpers/wait';

const suite = suiteTransporter(FAKE);
const namespace = `rolling-leave-${crypto.randomBytes(4).toString('hex')}`;

interface Run {
  id: string;
  node: string;
}
const runs: Run[] = [];

/** Each node's `pay`: records the run; `hold: true` waits until the test lets it finish. */
let releaseHeld!: () => void;
const held = new Promise<void>((resolve) => (releaseHeld = resolve));

function broker(nodeID: string, middlewares: Middleware[] = []): ServiceBroker {
  // brokerOptions reads only these two of the configuration.
  const cfg = { transporter: suite.transporter, logLevel: 'fatal' } as Config;
  const options = brokerOptions(cfg, { namespace, nodeID, logger: false });
  return new ServiceBroker({ ...options, middlewares: [...(options.middlewares ?? []), ...middlewares] });
}

function billingNode(nodeID: string): ServiceBroker {
  const b = broker(nodeID);
  b.createService({
    name: 'ledgertest',
    actions: {
      async pay(ctx) {
        const { id, hold } = ctx.params as { id: string; hold?: boolean };
        runs.push({ id, node: nodeID });
        if (hold) await held;
        return { id, node: nodeID };
      },
      // A handler whose own nested call finds no service: not provably undelivered, never sent again.
      async payThenCall(ctx) {
        runs.push({ id: (ctx.params as { id: string }).id, node: nodeID });
        return ctx.call('nowhere.action');
      },
    },
  });
  return b;
}

/** Holds the INFO packets `from` sends while `holding`; `release` hands them on in order. */
function infoHold(from: string) {
  const waiting: (() => unknown)[] = [];
  const state = { holding: false, heldInfos: 0, requestsTo: 0 };
  const middleware: Middleware = {
    transitMessageHandler(next: (cmd: string, packet: { payload: { sender?: string } }) => unknown) {
      return (cmd: string, packet: { payload: { sender?: string } }) => {
        if (state.holding && cmd === 'INFO' && packet.payload.sender === from) {
          state.heldInfos++;
          waiting.push(() => next(cmd, packet));
          return Promise.resolve(true);
        }
        return next(cmd, packet);
      };
    },
    transitPublish(next: (packet: { type: string; target?: string }) => unknown) {
      return (packet: { type: string; target?: string }) => {
        if (packet.type === 'REQ' && packet.target === from) state.requestsTo++;
        return next(packet);
      };
    },
  } as unknown as Middleware;
  return {
    middleware,
    state,
    release() {
      state.holding = false;
      for (const deliver of waiting.splice(0)) deliver();
    },
  };
}

const hold = infoHold(`${namespace}-a`);
const caller = broker(`${namespace}-caller`, [hold.middleware]);
const a = billingNode(`${namespace}-a`);
const b = billingNode(`${namespace}-b`);

beforeAll(async () => {
  await Promise.all([caller.start(), a.start(), b.start()]);
  await waitFor('the caller knows pay on both nodes', () => {
    const nodes = caller.registry.getServiceList({ onlyAvailable: true, skipInternal: true }) as unknown as {
      nodeID: string;
    }[];
    return [a.nodeID, b.nodeID].every((id) => nodes.some((s) => s.nodeID === id));
  });
});

afterAll(async () => {
  hold.release();
  releaseHeld();
  await Promise.all([caller.stop(), a.stop(), b.stop()]);
});

describe(`a node leaving gracefully while requests flow, over ${suite.label}`, () => {
  it('sends again only what the leaving node refused, finishes what it was running, and runs each request once', async () => {
    // A payment running on A when its stop begins.
    const running = caller.call('ledgertest.pay', { id: 'running', hold: true }, { nodeID: a.nodeID });
    await waitFor('the held payment running on A', () => runs.some((r) => r.id === 'running'));

    hold.state.holding = true;
    const stopping = a.stop();
    // A told the others it has no services (held from the caller), waited its leave notice, and now
    // refuses what still reaches it: the caller, not having read the notice, still sends there.
    await waitFor('A stopping', () => (a as unknown as { stopping: boolean }).stopping, 30_000);
    expect(hold.state.heldInfos).toBeGreaterThan(0);

    const sentToABefore = hold.state.requestsTo;
    const ids = Array.from({ length: 20 }, (_, i) => `during-${i}`);
    const outcomes = await Promise.allSettled(ids.map((id) => caller.call('ledgertest.pay', { id })));

    expect(outcomes.filter((o) => o.status === 'rejected')).toEqual([]);
    // Round robin sent some of them to A, which refused them before running them; B ran them.
    expect(hold.state.requestsTo - sentToABefore).toBeGreaterThan(0);
    for (const id of ids) expect(runs.filter((r) => r.id === id)).toEqual([{ id, node: b.nodeID }]);

    // The payment A was running finishes there, answered, before A leaves.
    hold.release();
    releaseHeld();
    await expect(running).resolves.toEqual({ id: 'running', node: a.nodeID });
    await stopping;
    expect(runs.filter((r) => r.id === 'running')).toEqual([{ id: 'running', node: a.nodeID }]);

    // After A has gone, B alone serves.
    await expect(caller.call('ledgertest.pay', { id: 'after' })).resolves.toEqual({ id: 'after', node: b.nodeID });
  });

  it('does not send again a request whose handler ran and failed on a nested call', async () => {
    await expect(caller.call('ledgertest.payThenCall', { id: 'nested' })).rejects.toMatchObject({
      name: 'ServiceNotFoundError',
      data: { action: 'nowhere.action' },
    });
    expect(runs.filter((r) => r.id === 'nested')).toHaveLength(1);
  });
});

describe('provablyUndelivered', () => {
  it('holds for the called action refused before running, and for nothing else', () => {
    const refused = { name: 'ServiceNotAvailableError', data: { action: 'billing.pay', nodeID: 'old' } };
    expect(provablyUndelivered(refused, 'billing.pay')).toBe(true);
    expect(provablyUndelivered({ name: 'ServiceNotFoundError', data: { action: 'billing.pay' } }, 'billing.pay')).toBe(
      true,
    );
    // A nested call's failure, a node gone with the call pending, a timeout: the call may have run.
    expect(provablyUndelivered(refused, 'subscribers.get')).toBe(false);
    expect(provablyUndelivered({ name: 'RequestRejectedError', data: { action: 'billing.pay' } }, 'billing.pay')).toBe(
      false,
    );
    expect(provablyUndelivered({ name: 'RequestTimeoutError', data: { action: 'billing.pay' } }, 'billing.pay')).toBe(
      false,
    );
    expect(provablyUndelivered(undefined, 'billing.pay')).toBe(false);
  });
});
