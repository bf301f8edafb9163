import { sessionOptions } from '../../shared/db/client';

describe("the app's PostgreSQL session options", () => {
  it('turn JIT off', () => {
    expect(sessionOptions(undefined)).toBe('-c jit=off');
    expect(sessionOptions('  ')).toBe('-c jit=off');
  });

  it("put the operator's PGOPTIONS after, so they win", () => {
    expect(sessionOptions('-c jit=on -c statement_timeout=5s')).toBe('-c jit=off -c jit=on -c statement_timeout=5s');
  });
});
