/**
 * RouterActions counts and times every CoA exchange in coa_requests_total and
 * coa_request_duration_seconds (README: metrics), by kind and outcome as the NAS answered.
 */
import type { CoaClient } from '../../services/network-access/coa/client';
import type { CoaReply } from '../../services/network-access/coa/outcome';
import type { RouterOsClient } from '../../services/network-access/routeros/client';
import { RouterActions } from '../../services/network-access/router-actions';
import type { LiveSession } from '../../services/network-access/sessions';
import { registry } from '../../shared/metrics';

const session: LiveSession = {
  username: 'alice',
  acctSessionId: 's1',
  framedIp: '10.0.0.2',
  nasIp: '192.0.2.1',
  nas: { id: 1, name: 'nas1', ip: '192.0.2.1', secret: 'x', coaPort: 3799, api: null },
};

function actions(replies: CoaReply[]): RouterActions {
  const next = async () => replies.shift()!;
  const coa = { disconnect: next, change: next } as unknown as CoaClient;
  return new RouterActions(coa, {} as RouterOsClient);
}

async function count(kind: string, outcome: string): Promise<number> {
  const metric = await registry.getSingleMetric('coa_requests_total')!.get();
  return metric.values.find((v) => v.labels.kind === kind && v.labels.outcome === outcome)?.value ?? 0;
}

test('each exchange is counted by kind and outcome, a NAK for a missing session as no_session', async () => {
  const a = actions([
    { kind: 'ack', attempts: 1, rttMs: 3 },
    { kind: 'nak', errorCause: 503, attempts: 1, rttMs: 3 },
    { kind: 'timeout', attempts: 3 },
    { kind: 'nak', errorCause: 404, attempts: 1, rttMs: 2 },
  ]);
  await a.disconnect('alice', [session]);
  await a.disconnect('alice', [session]);
  await a.disconnect('alice', [session]);
  await a.changeRate('alice', [session], '1M/1M');
  expect(await count('disconnect', 'ack')).toBe(1);
  expect(await count('disconnect', 'no_session')).toBe(1);
  expect(await count('disconnect', 'timeout')).toBe(1);
  expect(await count('coa', 'nak')).toBe(1);
  const latency = await registry.getSingleMetricAsString('coa_request_duration_seconds');
  const counts = [...latency.matchAll(/^coa_request_duration_seconds_count\{.*\} (\d+)$/gm)].map((m) => Number(m[1]));
  expect(counts.reduce((s, n) => s + n, 0)).toBe(4);
});
