/**
 * A webhook receiver on 127.0.0.1 for the tests of outgoing webhooks: it records every request
 * (headers, exact body) and answers as its path's mode says: `ok` 200, `fail` 500, `hang` never,
 * `redirect` 302 to /landing, `big` 200 with a megabyte of body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

export type Mode = 'ok' | 'fail' | 'hang' | 'redirect' | 'big';

export interface Receiver {
  base: string;
  received: Received[];
  modes: Map<string, Mode>;
  on(path: string): Received[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const modes = new Map<string, Mode>();
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(parts).toString('utf8'), at: Date.now() });
      const mode = modes.get(path) ?? 'ok';
      if (mode === 'hang') {
        hanging.add(res);
        return;
      }
      if (mode === 'redirect') {
        res.writeHead(302, { location: '/landing' });
        res.end();
        return;
      }
      if (mode === 'big') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('x'.repeat(1 << 20));
        return;
      }
      res.writeHead(mode === 'ok' ? 200 : 500, { 'content-type': 'text/plain' });
      res.end(mode === 'ok' ? 'thanks' : 'receiver broken');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    received,
    modes,
    on: (path) => received.filter((r) => r.path === path),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
