import { sessionSetup } from '../../shared/db/client';

describe("the app's PostgreSQL session setup", () => {
  it('turns JIT off', () => {
    expect(sessionSetup({})).toBe('set jit = off');
  });

  it("leaves the server's setting with PG_JIT=server", () => {
    expect(sessionSetup({ PG_JIT: 'server' })).toBeUndefined();
  });
});
