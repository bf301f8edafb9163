/**
 * RouteReadiness (services/gateway/readiness.ts): ready once every route the expected units
 * declare has been learned; a declared route not learned yet is told apart from a path no unit
 * declares; the expected units come from EXPECTED_UNITS, the process's own units, or all.
 */
import { loadConfig, setConfig } from '../../shared/config';
import { declaredRoutes, expectedUnits, matchesTemplate, RouteReadiness } from '../../services/gateway/readiness';

const ALL = ['gateway', 'billing', 'subscribers'];

const fixed = (expected: string[]) => async () => ({
  byKey: new Map([
    ['GET /health', 'gateway'],
    ['GET /api/invoices/:id', 'billing'],
    ['POST /api/invoices', 'billing'],
    ['GET /api/subscribers', 'subscribers'],
  ]),
  expectedUnits: expected,
});

const tick = () => new Promise((r) => setImmediate(r));

describe('RouteReadiness', () => {
  it('is ready once every expected route is learned, whatever the order', async () => {
    const r = new RouteReadiness(fixed(['gateway', 'billing']));
    r.learn(['GET /health']);
    expect(r.ready).toBe(false); // declarations not read yet
    await tick();
    expect(r.ready).toBe(false);
    expect(r.waitingFor()).toEqual(['billing']);
    r.learn(['GET /api/invoices/:id', 'POST /api/invoices']);
    expect(r.ready).toBe(true);
  });

  it('tells a declared route apart from an unknown path', async () => {
    const r = new RouteReadiness(fixed(ALL));
    await tick();
    expect(r.declares('GET', '/api/invoices/12')).toBe(true);
    expect(r.declares('GET', '/api/invoices/12/')).toBe(true);
    expect(r.declares('DELETE', '/api/invoices/12')).toBe(false);
    expect(r.declares('GET', '/api/nothing')).toBe(false);
    expect(r.waitingFor()).toEqual(['billing', 'gateway', 'subscribers']);
  });

  it('falls back to ready when the declarations cannot be read', async () => {
    const r = new RouteReadiness(() => Promise.reject(new Error('no units')));
    await tick();
    expect(r.ready).toBe(true);
  });
});

describe('expectedUnits', () => {
  it('takes EXPECTED_UNITS, else the own units without a transporter, else all', () => {
    expect(expectedUnits(ALL, { EXPECTED_UNITS: 'gateway,billing' })).toEqual(['gateway', 'billing']);
    expect(expectedUnits(ALL, { SERVICES: 'gateway,billing' })).toEqual(['gateway', 'billing']);
    expect(expectedUnits(ALL, { SERVICES: 'gateway', TRANSPORTER: 'nats://x' })).toEqual(ALL);
    expect(expectedUnits(ALL, {})).toEqual(ALL);
    expect(() => expectedUnits(ALL, { EXPECTED_UNITS: 'gateway,bill' })).toThrow(/bill/);
  });
});

it('matches templates segment by segment', () => {
  expect(matchesTemplate('/api/invoices/:id/pdf', '/api/invoices/7/pdf')).toBe(true);
  expect(matchesTemplate('/api/invoices/:id/pdf', '/api/invoices//pdf')).toBe(false);
  expect(matchesTemplate('/api/invoices/:id', '/api/invoices/7/pdf')).toBe(false);
});

it('reads every unit declaration from runtime/units.ts without starting a unit', async () => {
  setConfig(loadConfig({ JWT_SECRET: 'x' }));
  const { byKey } = await declaredRoutes();
  expect(byKey.get('GET /health')).toBe('gateway');
  expect(byKey.get('POST /api/auth/login')).toBe('subscribers');
  expect(byKey.get('GET /api/invoices/:id/pdf')).toBe('billing');
  expect(byKey.get('GET /api/nas')).toBe('network-access');
});
