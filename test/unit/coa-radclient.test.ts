/**
 * The NAS simulator checked once against FreeRADIUS's own client (`radclient`, Debian
 * freeradius-utils), so the tests and bench:coa talk to something known to speak RFC 5176.
 * radclient is a CI requirement (.ci/run installs it): a missing binary fails here, loudly.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { NasSimulator } from '../sim/nas-simulator';

const RADCLIENT = process.env.RADCLIENT ?? '/usr/bin/radclient';
const SECRET = 'interop-secret';

/**
 * One try; the answer awaited `timeoutS`. The simulator answers on this jest worker, which a
 * loaded CI run can keep from it for more than a second; the cases that expect no answer wait 1 s.
 */
function radclient(
  port: number,
  command: 'disconnect' | 'coa',
  attributes: string,
  secret = SECRET,
  timeoutS = 10,
): Promise<string> {
  return new Promise((resolve) => {
    const child = execFile(
      RADCLIENT,
      ['-x', '-r', '1', '-t', String(timeoutS), `127.0.0.1:${port}`, command, secret],
      (_err, stdout, stderr) => resolve(stdout + stderr),
    );
    child.stdin!.end(attributes);
  });
}

let sim: NasSimulator;
beforeAll(async () => {
  if (!fs.existsSync(RADCLIENT))
    throw new Error(`radclient not found at ${RADCLIENT}: install freeradius-utils (see .ci/run)`);
  sim = await new NasSimulator({
    secret: SECRET,
    answer: (r) => (r.userName === 'gone' ? { nak: 503 } : r.userName === 'quiet' ? 'silent' : 'ack'),
  }).start();
});
afterAll(() => sim.stop());

it("answers radclient's Disconnect-Request with a Disconnect-ACK radclient accepts", async () => {
  const out = await radclient(
    sim.port,
    'disconnect',
    'User-Name = "ali@north"\nAcct-Session-Id = "81a00004"\nFramed-IP-Address = 10.0.0.9\n',
  );
  expect(out).toMatch(/Received Disconnect-ACK/);
  expect(sim.requests.at(-1)).toMatchObject({
    code: 'Disconnect-Request',
    userName: 'ali@north',
    acctSessionId: '81a00004',
    framedIp: '10.0.0.9',
  });
});

it('a NAK carries an Error-Cause radclient decodes', async () => {
  const out = await radclient(sim.port, 'disconnect', 'User-Name = "gone"\n');
  expect(out).toMatch(/Received Disconnect-NAK/);
  expect(out).toMatch(/Error-Cause = Session-Context-Not-Found/);
});

it("reads Mikrotik-Rate-Limit from radclient's CoA-Request (vendor 14988, attribute 8)", async () => {
  const out = await radclient(sim.port, 'coa', 'User-Name = "u2"\nMikrotik-Rate-Limit = "2M/4M"\n');
  expect(out).toMatch(/Received CoA-ACK/);
  expect(sim.requests.at(-1)).toMatchObject({ code: 'CoA-Request', userName: 'u2', rateLimit: '2M/4M' });
});

it('drops a request signed with another secret, and a silent user gets no answer', async () => {
  const before = sim.stats.invalid;
  expect(await radclient(sim.port, 'disconnect', 'User-Name = "x"\n', 'wrong-secret', 1)).toMatch(
    /No reply from server/,
  );
  expect(sim.stats.invalid).toBeGreaterThan(before);
  expect(await radclient(sim.port, 'disconnect', 'User-Name = "quiet"\n', SECRET, 1)).toMatch(/No reply from server/);
});
