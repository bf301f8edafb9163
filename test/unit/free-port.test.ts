/** Ports for child processes come from outside the range the kernel hands to outgoing connections. */
import fs from 'node:fs';
import net from 'node:net';
import { freePort } from '../../runtime/cluster';

it('gives a port that can be listened on, below the ephemeral range on Linux', async () => {
  const port = await freePort();
  const range = '/proc/sys/net/ipv4/ip_local_port_range';
  if (fs.existsSync(range)) expect(port).toBeLessThan(Number(fs.readFileSync(range, 'utf8').trim().split(/\s+/)[0]));
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  await new Promise((r) => server.close(r));
});
