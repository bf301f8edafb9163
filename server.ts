/** `npm start`: the embedded default, or one deployment unit of the distributed mode (see README). */
import { ConfigError, loadConfig } from './shared/config';
import { startApp } from './shared/runtime/app';

async function main(): Promise<void> {
  let app: Awaited<ReturnType<typeof startApp>>;
  try {
    app = await startApp(loadConfig(), { callerHandlesSignals: true });
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  if (app.baseUrl) app.broker.logger.info(`HTTP API listening on ${app.baseUrl}`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.broker.logger.info(`${signal} received, stopping`);
    app.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
