/** What the HTTP benchmarks share: the typed autocannon entry point and the server's environment. */

/** What the benches read of an autocannon run (the package ships no types). */
export interface AutocannonResult {
  requests: { average: number; total: number };
  non2xx: number;
  errors: number;
}
interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
}
export interface AutocannonRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  duration: number;
  headers: Record<string, string>;
  requests: { setupRequest: (req: AutocannonRequest) => AutocannonRequest }[];
}) => AutocannonInstance;
// eslint-disable-next-line @typescript-eslint/no-require-imports -- autocannon has no type declarations; the shape used is typed above.
export const autocannon: Autocannon = require('autocannon');

/** The app as the benches run it: listening on a free loopback port, rate limits out of the way. */
export function benchEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    JWT_SECRET: process.env.JWT_SECRET || 'bench-jwt-secret-not-for-production',
    ENCRYPTION_KEY: process.env.ENCRYPTION_KEY || 'b'.repeat(64),
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.LOG_LEVEL || 'warn',
    RATE_LIMIT_PER_MIN: '1000000000',
    SERVICES: process.env.BENCH_SERVICES || 'gateway,billing',
  };
}

/**
 * A bench script is both the driver and, forked with `serve` as its first argument, the server it
 * measures: runs the one the arguments ask for. A server that fails exits; a driver sets the code.
 */
export function runBench(main: () => Promise<void>, serve: (args: string[]) => Promise<void>): void {
  const fail = (exit: boolean) => (err: unknown) => {
    console.error(err);
    if (exit) process.exit(1);
    process.exitCode = 1;
  };
  if (process.argv[2] === 'serve') serve(process.argv.slice(3)).catch(fail(true));
  else main().catch(fail(false));
}
