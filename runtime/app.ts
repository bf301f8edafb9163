import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { ServiceBroker, type BrokerOptions } from 'moleculer';
import { brokerOptions } from '../moleculer.config';
import { nodeMetricsService } from './metrics-service';
import { startOpsServer, type OpsServer } from './ops-server';
import { schemasFor } from './units';
import { scheduleEmbeddedBaseBackups, walArchiveDir } from './embedded-pitr';
import { backupBeforeUpgrade } from './upgrade-backup';
import { resolveEncryptionKey, setConfig, type Config } from '../shared/config';
import { closeDatabase, initDatabase } from '../shared/db/client';
import { runMigrations, startEmbeddedPostgres, type EmbeddedPostgresHandle } from '../shared/db/database-setup';

export interface App {
  broker: ServiceBroker;
  databaseUrl: string;
  /** Base URL of the HTTP gateway when this process runs one. */
  baseUrl?: string;
  /** Probes and metrics on OPS_PORT, when set (runtime/ops-server.ts). */
  ops?: OpsServer;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Apply migrations at start (default true; tests start from an already-migrated template). */
  migrate?: boolean;
  broker?: Partial<BrokerOptions>;
}

export async function startApp(cfg: Config, opts: StartOptions = {}): Promise<App> {
  let embedded: EmbeddedPostgresHandle | undefined;
  let databaseUrl = cfg.databaseUrl;
  if (!databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: cfg.dataDir,
      port: cfg.embeddedPgPort,
      walArchive: walArchiveDir(process.env),
    });
    databaseUrl = embedded.url;
  }
  const finalCfg = setConfig({ ...cfg, databaseUrl, encryptionKey: resolveEncryptionKey(cfg, !!embedded) });
  let holdsDatabase = false;
  try {
    if (opts.migrate !== false) {
      if (embedded)
        await backupBeforeUpgrade(
          { dataDir: finalCfg.dataDir, encryptionKey: finalCfg.encryptionKey! },
          databaseUrl,
          process.env,
          // Before the broker and its logger exist: a JSON line in their shape, as the embedded start's.
          (msg) => console.log(JSON.stringify({ ts: Date.now(), level: 'info', mod: 'upgrade', msg })),
        );
      await runMigrations(databaseUrl);
    }
    initDatabase(databaseUrl, undefined, finalCfg.databaseReadUrl);
    holdsDatabase = true;
    const broker = new ServiceBroker(brokerOptions(finalCfg, opts.broker));
    for (const schema of schemasFor(finalCfg.services)) broker.createService(schema);
    broker.createService(nodeMetricsService);
    await broker.start();
    const ops = await startOpsServer(broker, process.env.OPS_PORT ? Number(process.env.OPS_PORT) : undefined);
    const stopBaseBackups = embedded
      ? scheduleEmbeddedBaseBackups(embedded, finalCfg, process.env, broker.getLogger('base-backup'))
      : undefined;
    const gateway = broker.getLocalService('gateway') as unknown as { server?: Server } | undefined;
    const address = gateway?.server?.address() as AddressInfo | null | undefined;
    return {
      broker,
      databaseUrl,
      baseUrl: address ? `http://127.0.0.1:${address.port}` : undefined,
      ops,
      async stop() {
        await stopBaseBackups?.();
        await broker.stop();
        await ops?.close();
        await closeDatabase();
        if (embedded) await embedded.stop();
      },
    };
  } catch (err) {
    if (holdsDatabase) await closeDatabase();
    if (embedded) await embedded.stop();
    throw err;
  }
}
