/** `npm start`: the embedded default, or one deployment unit of the distributed mode (see README). */
import { ConfigError, loadConfig } from './shared/config';
import { startApp } from './runtime/app';
import { stopOnSignals } from './runtime/shutdown';

/**
 * A failed start prints one line that says why (StartupErrors also name the fix), never a stack
 * trace; LOG_LEVEL=debug adds the stack for a bug hunt. Exit code 2 for configuration, else 1.
 */
function exitWith(prefix: string, err: unknown, code: number): never {
  const message = err instanceof Error ? err.message : err === undefined ? '' : String(err);
  const line = message
    .split('\n')
    .map((s) => s.trim())
    .find(Boolean);
  const name = err instanceof Error ? err.name : typeof err;
  console.error(`${prefix}: ${line ?? `${name} without a message (LOG_LEVEL=debug shows more)`}`);
  if (process.env.LOG_LEVEL === 'debug') console.error(err instanceof Error ? err.stack : err);
  process.exit(code);
}

async function main(): Promise<void> {
  let app: Awaited<ReturnType<typeof startApp>>;
  try {
    app = await startApp(loadConfig());
  } catch (err) {
    if (err instanceof ConfigError) exitWith('configuration error', err, 2);
    exitWith('cannot start', err, 1);
  }
  if (app.baseUrl) app.broker.logger.info(`HTTP API listening on ${app.baseUrl}`);
  stopOnSignals(app);
}

main().catch((err) => exitWith('cannot start', err, 1));
