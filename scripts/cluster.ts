/** `npm run start:cluster`: the six units as separate processes on this machine (runtime/cluster.ts). */
import { ConfigError } from '../shared/config';
import { startCluster } from '../runtime/cluster';

async function main(): Promise<void> {
  const cluster = await startCluster();
  const transport = cluster.transporter.startsWith('tcp://') ? 'TCP (loopback)' : cluster.transporter;
  console.log(`cluster ready: ${cluster.processes.length} processes over ${transport}, HTTP API on ${cluster.baseUrl}`);
  for (const p of cluster.processes) {
    p.exited.then((code) => console.log(`[cluster] ${p.units} (${p.nodeID}) exited: ${code}`));
  }
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    console.log(`[cluster] ${signal} received, stopping every process`);
    cluster.stop().then(
      () => process.exit(0),
      (err) => {
        console.error(err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

main().catch((err) => {
  console.error(err instanceof ConfigError ? `configuration error: ${err.message}` : err);
  process.exit(err instanceof ConfigError ? 2 : 1);
});
