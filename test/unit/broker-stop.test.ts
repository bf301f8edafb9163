/**
 * A stopped broker leaves no timer behind: a process (or a jest worker) with nothing left to do
 * exits at once instead of waiting for Moleculer's debounced service announcement. Checked in a
 * process of its own (the build `npm test` makes first), where no test runner's timers come and go.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../../shared/paths';

const script = `
  const { ServiceBroker } = require('moleculer');
  const { brokerOptions } = require(${JSON.stringify(path.join(repoRoot(), 'dist', 'moleculer.config.js'))});
  const broker = new ServiceBroker({ ...brokerOptions({ transporter: 'Fake', logLevel: 'fatal' }), logger: false });
  broker.createService({ name: 'announced', actions: { ping: () => 'pong' } });
  broker.start()
    .then(() => broker.stop())
    .then(() => console.log(JSON.stringify(process.getActiveResourcesInfo())));
`;

it('cancels the announcement of a service that started less than a second before the stop', () => {
  const left = JSON.parse(execFileSync(process.execPath, ['-e', script], { cwd: repoRoot(), encoding: 'utf8' }));
  expect(left).not.toContain('Timeout');
});
