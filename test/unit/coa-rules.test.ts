import fc from 'fast-check';
import { combineOutcomes, errorCause, outcomeOfReply, type Outcome } from '../../services/network-access/coa/outcome';
import { RttEstimator } from '../../services/network-access/coa/rtt';

describe('RttEstimator', () => {
  const bounds = { initialMs: 1000, minMs: 20, maxMs: 5000 };

  it('uses the initial timeout before any sample', () => {
    expect(new RttEstimator(bounds).rtoMs()).toBe(1000);
  });

  it('converges near 1.5 x a steady round trip', () => {
    const e = new RttEstimator(bounds);
    for (let i = 0; i < 50; i++) e.sample(30);
    expect(e.rtoMs()).toBe(45);
  });

  it('widens with jitter', () => {
    const steady = new RttEstimator(bounds);
    const jittery = new RttEstimator(bounds);
    for (let i = 0; i < 50; i++) {
      steady.sample(30);
      jittery.sample(i % 2 ? 10 : 50);
    }
    expect(jittery.rtoMs()).toBeGreaterThan(steady.rtoMs());
  });

  it('stays within its bounds whatever the samples', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 100_000 }), { minLength: 1, maxLength: 50 }), (samples) => {
        const e = new RttEstimator(bounds);
        for (const s of samples) e.sample(s);
        const rto = e.rtoMs();
        return rto >= bounds.minMs && rto <= bounds.maxMs;
      }),
    );
  });
});

describe('outcomes', () => {
  it('maps replies to what happened to the session', () => {
    expect(outcomeOfReply({ kind: 'ack', attempts: 1, rttMs: 3 }, 'disconnect')).toBe('disconnected');
    expect(outcomeOfReply({ kind: 'ack', attempts: 1, rttMs: 3 }, 'rate_limit')).toBe('applied');
    expect(outcomeOfReply({ kind: 'nak', errorCause: 503, attempts: 1, rttMs: 3 }, 'disconnect')).toBe('offline');
    expect(outcomeOfReply({ kind: 'nak', errorCause: 501, attempts: 1, rttMs: 3 }, 'disconnect')).toBe('rejected');
    expect(outcomeOfReply({ kind: 'nak', errorCause: null, attempts: 1, rttMs: 3 }, 'disconnect')).toBe('rejected');
    expect(outcomeOfReply({ kind: 'timeout', attempts: 2 }, 'disconnect')).toBe('timeout');
    expect(outcomeOfReply({ kind: 'error', attempts: 0, message: 'x' }, 'disconnect')).toBe('failed');
  });

  it('names RFC 5176 error causes', () => {
    expect(errorCause(506)).toEqual({ code: 506, name: 'Resources Unavailable' });
    expect(errorCause(999)).toEqual({ code: 999, name: 'Unknown' });
    expect(errorCause(null)).toBeNull();
  });

  it('a subscriber with several sessions gets the most telling outcome', () => {
    expect(combineOutcomes([])).toBe('offline');
    expect(combineOutcomes(['offline', 'disconnected'])).toBe('disconnected');
    expect(combineOutcomes(['disconnected', 'failed'])).toBe('failed');
    expect(combineOutcomes(['kicked', 'disconnected'] as Outcome[])).toBe('kicked');
  });
});
