"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
/** `npm run start:cluster`: the six units as separate processes on this machine (runtime/cluster.ts). */
const config_1 = require("../shared/config");
const cluster_1 = require("../runtime/cluster");
async function main() {
    const cluster = await (0, cluster_1.startCluster)();
    const transport = cluster.transporter.startsWith('tcp://') ? 'TCP (loopback)' : cluster.transporter;
    console.log(`cluster ready: ${cluster.processes.length} processes over ${transport}, HTTP API on ${cluster.baseUrl}`);
    for (const p of cluster.processes) {
        p.exited.then((code) => console.log(`[cluster] ${p.units} (${p.nodeID}) exited: ${code}`));
    }
    let stopping = false;
    const onSignal = (signal) => {
        if (stopping)
            return;
        stopping = true;
        console.log(`[cluster] ${signal} received, stopping every process`);
        cluster.stop().then(() => process.exit(0), (err) => {
            console.error(err);
            process.exit(1);
        });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
}
main().catch((err) => {
    console.error(err instanceof config_1.ConfigError ? `configuration error: ${err.message}` : err);
    process.exit(err instanceof config_1.ConfigError ? 2 : 1);
});
//# sourceMappingURL=cluster.js.map