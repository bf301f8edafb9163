/**
 * The black-box probe's findings (issue 28), each through HTTP: a body nested 5,000 deep, the
 * public receipt's headers, a request body trickled a byte at a time, bulk actions without a
 * maximum, /metrics without credentials, a chat token readable by moving its provider's URL, and
 * a logo URL the renderer's browser would fetch (docs/security.md).
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { db } from '../../shared/db/client';
import { saveSettings } from '../../shared/settings';
import { startOpsServer } from '../../runtime/ops-server';
import { checkOutgoingUrl, guardedLookup, isPrivateAddress } from '../../shared/net/address-policy';
import { adminToken, client, startTestApp, token, TEST_METRICS_TOKEN, type TestApp } from '../helpers/app';
import { seedInvoice, seedReseller, seedSubscriber } from './documents-fixtures';

const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

/** A host on loopback that counts what it is asked and answers a PNG or a provider's JSON. */
class Target {
  requests: string[] = [];
  server = http.createServer((req, res) => {
    this.requests.push(`${req.method} ${req.url}`);
    req.resume();
    if (req.url === '/hang.png') return;
    if (req.url === '/moved.png') {
      res.writeHead(302, { location: '/logo.png' });
      res.end();
      return;
    }
    if (req.url === '/big.png') {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.alloc(256 * 1024 + 1));
      return;
    }
    if (req.url === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<p>not an image</p>');
      return;
    }
    if (req.url?.endsWith('.png')) {
      res.writeHead(200, { 'content-type': 'image/png' });
      res.end(Buffer.from(PNG_B64, 'base64'));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ok: true, result: { message_id: 1 } }));
  });
  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let t: TestApp;
let api: ReturnType<typeof client>;
let target: Target;
let targetBase: string;
let invoiceId: number;

beforeAll(async () => {
  target = new Target();
  targetBase = await target.start();
  t = await startTestApp({ env: { HEADERS_TIMEOUT_MS: '1000', REQUEST_TIMEOUT_MS: '1500' } });
  api = client(t.baseUrl);
  const reseller = await seedReseller(t, 'Probe');
  const sub = await seedSubscriber(t, reseller.id, { phone: '555000111' });
  const invoice = await seedInvoice(t, sub, { items: [{ description: 'March', qty: 1, unitPrice: 1000 }] });
  invoiceId = invoice.id;
});
afterAll(async () => {
  await t?.close();
  await target?.stop();
});

function nested(depth: number): string {
  return '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
}

describe('a JSON body nested 5,000 deep', () => {
  it('is a 400 before any auth, on a public and on an authenticated route', async () => {
    const login = await api.post('/api/auth/login', undefined, { rawBody: nested(5000) });
    expect(login.status).toBe(400);
    expect(login.body).toEqual({ success: false, message: 'JSON body nests deeper than 64 levels' });
    const arrays = await api.post('/api/auth/login', undefined, {
      rawBody: `{"a":${'['.repeat(5000)}${']'.repeat(5000)}}`,
    });
    expect(arrays.status).toBe(400);
    const anonymous = await api.post('/api/subscribers', undefined, { rawBody: nested(5000) });
    expect(anonymous.status).toBe(400);
    const admin = await api.post('/api/subscribers', undefined, { rawBody: nested(5000), token: adminToken() });
    expect(admin.status).toBe(400);
  });

  it('brackets inside strings do not count, and 64 levels still reach the route', async () => {
    const inString = await api.post('/api/auth/login', { username: '[{'.repeat(10), password: 'x' });
    expect(inString.status).toBe(401);
    const deep = await api.post('/api/auth/login', undefined, { rawBody: nested(64) });
    expect(deep.status).toBe(400);
    expect(deep.body.message).not.toMatch(/nests deeper/);
    const deeper = await api.post('/api/auth/login', undefined, { rawBody: nested(65) });
    expect(deeper.body.message).toBe('JSON body nests deeper than 64 levels');
  });
});

describe('the public receipt', () => {
  let pagePath: string;
  beforeAll(async () => {
    const rotated = await api.post(`/api/invoices/${invoiceId}/public-token`, {}, { token: adminToken() });
    expect(rotated.status).toBe(200);
    const url = new URL(rotated.body.data.public_url);
    pagePath = url.pathname + url.search;
  });

  it('page sends the console protections: CSP without scripts, nosniff, no framing', async () => {
    const page = await api.get(pagePath);
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).toMatch(/style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(csp).toMatch(/img-src data:/);
    expect(csp).toMatch(/base-uri 'none'/);
    expect(csp).toMatch(/form-action 'none'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('cache-control')).toBe('private, no-store');
    expect(page.headers.get('x-robots-tag')).toBe('noindex');
  });

  it('PDF sends them too', async () => {
    const url = new URL(pagePath, t.baseUrl);
    url.pathname += '/pdf';
    const pdf = await fetch(url);
    expect(pdf.status).toBe(200);
    await pdf.arrayBuffer();
    expect(pdf.headers.get('content-security-policy')).toBe(
      "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(pdf.headers.get('x-content-type-options')).toBe('nosniff');
    expect(pdf.headers.get('x-frame-options')).toBe('DENY');
    expect(pdf.headers.get('referrer-policy')).toBe('no-referrer');
    expect(pdf.headers.get('cache-control')).toBe('private, no-store');
    expect(pdf.headers.get('x-robots-tag')).toBe('noindex');
  });

  it('renders with the browser network off: a logo URL stored before the policy is never fetched', async () => {
    target.requests = [];
    // As a row written before the address policy existed would hold it.
    await saveSettings(db(), { operator_logo_url: `${targetBase}/tracker.png` });
    const url = new URL(pagePath, t.baseUrl);
    url.pathname += '/pdf';
    url.searchParams.set('paper', 'A5');
    const pdf = await fetch(url);
    expect(pdf.status).toBe(200);
    expect((await pdf.arrayBuffer()).byteLength).toBeGreaterThan(500);
    expect(target.requests).toEqual([]);
    await saveSettings(db(), { operator_logo_url: '' });
  });
});

describe('a request trickled a byte at a time', () => {
  it('is cut once REQUEST_TIMEOUT_MS runs out, headers or body', async () => {
    const { port } = new URL(t.baseUrl);
    const started = Date.now();
    const closed = await new Promise<{ ms: number; data: string }>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ ms: Date.now() - started, data }));
      socket.write(
        'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n',
      );
      const timer = setInterval(() => {
        if (socket.writable) socket.write('{');
        else clearInterval(timer);
      }, 200);
      socket.on('close', () => clearInterval(timer));
    });
    expect(closed.ms).toBeLessThan(5000);
    expect(closed.data).toMatch(/^HTTP\/1\.1 408/);
  });

  it('headers that never end are cut after HEADERS_TIMEOUT_MS', async () => {
    const { port } = new URL(t.baseUrl);
    const started = Date.now();
    const closed = await new Promise<{ ms: number; data: string }>((resolve) => {
      const socket = net.connect(Number(port), '127.0.0.1');
      let data = '';
      socket.on('data', (d) => (data += d.toString()));
      socket.on('error', () => undefined);
      socket.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      const timer = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 200);
      socket.on('close', () => {
        clearInterval(timer);
        resolve({ ms: Date.now() - started, data });
      });
    });
    expect(closed.ms).toBeLessThan(4000);
    expect(closed.data).toMatch(/^HTTP\/1\.1 408/);
  });

  it('bound receiving only: an answer that takes longer than REQUEST_TIMEOUT_MS still arrives', async () => {
    // The settings service waits for a logo that never comes (5 s), well past this app's 1.5 s.
    const started = Date.now();
    const res = await api.put(
      '/api/settings',
      { operator_logo_url: `${targetBase}/hang.png`, allow_private_targets: true },
      { token: adminToken() },
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(4500);
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('operator_logo_url refused: no answer in time');
    await api.put('/api/settings', { allow_private_targets: false }, { token: adminToken() });
  });
});

describe('bulk actions', () => {
  it('take at most 10,000 ids: 10,001 is a 400 naming ids, and nothing is written', async () => {
    const ids = Array.from({ length: 10_001 }, (_, i) => i + 1);
    const res = await api.post('/api/subscribers/bulk-action', { ids, action: 'disconnect' }, { token: adminToken() });
    expect(res.status).toBe(400);
    expect(res.body.message).toBe('ids must NOT have more than 10000 items');
    const jobs = await t.pool.query('select count(*)::int as n from bulk_jobs');
    expect(jobs.rows[0].n).toBe(0);
  });
});

describe('outgoing addresses of chat providers and the logo', () => {
  it('a new provider URL without its token again is a 400, and nothing is stored', async () => {
    await api.put(
      '/api/settings',
      { telegram_bot_token: '123:real', messaging_provider: 'telegram' },
      { token: adminToken() },
    );
    const moved = await api.put(
      '/api/settings',
      { telegram_base_url: 'https://evil.example' },
      { token: adminToken() },
    );
    expect(moved.status).toBe(400);
    expect(moved.body.message).toBe(
      'telegram_bot_token must be given again in the same request when telegram_base_url changes',
    );
    const wa = await api.put('/api/settings', { whatsapp_base_url: 'https://evil.example' }, { token: adminToken() });
    expect(wa.status).toBe(400);
    expect(wa.body.message).toMatch(/^whatsapp_access_token must be given again/);
    const now = await api.get('/api/settings', { token: adminToken() });
    expect(now.body.data.telegram_base_url).toBe('https://api.telegram.org');
    expect(now.body.data.whatsapp_base_url).toBe('https://graph.facebook.com/v21.0');
  });

  it('a provider URL saved unchanged needs no token', async () => {
    const res = await api.put(
      '/api/settings',
      { telegram_base_url: 'https://api.telegram.org', whatsapp_base_url: 'https://graph.facebook.com/v21.0' },
      { token: adminToken() },
    );
    expect(res.status).toBe(200);
  });

  it('a loopback, private or metadata address is refused unless allow_private_targets', async () => {
    for (const url of [targetBase, 'http://10.1.2.3', 'http://169.254.169.254/latest', 'http://[::1]:8080']) {
      const res = await api.put(
        '/api/settings',
        { telegram_base_url: url, telegram_bot_token: '123:real' },
        { token: adminToken() },
      );
      expect(res.status).toBe(400);
      expect(res.body.message).toBe('telegram_base_url refused: a loopback, private or reserved address');
    }
    const allowed = await api.put(
      '/api/settings',
      { telegram_base_url: targetBase, telegram_bot_token: '123:real', allow_private_targets: true },
      { token: adminToken() },
    );
    expect(allowed.status).toBe(200);
    expect(allowed.body.data.allow_private_targets).toBe(true);
  });

  it('sending checks the address again: with the setting off, the token never leaves', async () => {
    target.requests = [];
    const ok = await api.post(`/api/invoices/${invoiceId}/send-chat`, { phone: '555000111' }, { token: adminToken() });
    expect(ok.status).toBe(200);
    expect(target.requests.length).toBeGreaterThan(0);
    target.requests = [];
    await api.put('/api/settings', { allow_private_targets: false }, { token: adminToken() });
    const refused = await api.post(
      `/api/invoices/${invoiceId}/send-chat`,
      { phone: '555000111' },
      { token: adminToken() },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('telegram_base_url refused: a loopback, private or reserved address');
    expect(target.requests).toEqual([]);
  });

  it('an http(s) logo is fetched once under the policy and kept as a data: URL', async () => {
    const refused = await api.put(
      '/api/settings',
      { operator_logo_url: `${targetBase}/logo.png` },
      { token: adminToken() },
    );
    expect(refused.status).toBe(400);
    expect(refused.body.message).toBe('operator_logo_url refused: a loopback, private or reserved address');
    expect(
      (await api.put('/api/settings', { operator_logo_url: 'javascript:alert(1)' }, { token: adminToken() })).body,
    ).toEqual({ success: false, message: 'operator_logo_url must be a PNG, JPEG, GIF or WebP image' });
    target.requests = [];
    const kept = await api.put(
      '/api/settings',
      { operator_logo_url: `${targetBase}/logo.png`, allow_private_targets: true },
      { token: adminToken() },
    );
    expect(kept.status).toBe(200);
    expect(kept.body.data.operator_logo_url).toBe(`data:image/png;base64,${PNG_B64}`);
    expect(target.requests).toEqual(['GET /logo.png']);
    const inline = await api.put(
      '/api/settings',
      { operator_logo_url: `data:image/png;base64,${PNG_B64}`, allow_private_targets: false },
      { token: adminToken() },
    );
    expect(inline.status).toBe(200);
  });

  it('a logo is refused when redirected, over 256 KB or not a PNG, JPEG, GIF or WebP, fetched or inline', async () => {
    const put = (url: string) =>
      api.put('/api/settings', { operator_logo_url: url, allow_private_targets: true }, { token: adminToken() });
    target.requests = [];
    const moved = await put(`${targetBase}/moved.png`);
    expect([moved.status, moved.body.message]).toEqual([400, 'operator_logo_url refused: answered HTTP 302']);
    expect(target.requests).toEqual(['GET /moved.png']);
    const big = await put(`${targetBase}/big.png`);
    expect([big.status, big.body.message]).toEqual([400, 'operator_logo_url refused: larger than 262144 bytes']);
    const page = await put(`${targetBase}/page.html`);
    expect([page.status, page.body.message]).toEqual([400, 'operator_logo_url must be a PNG, JPEG, GIF or WebP image']);
    const bigInline = await put(`data:image/png;base64,${Buffer.alloc(256 * 1024 + 1).toString('base64')}`);
    expect([bigInline.status, bigInline.body.message]).toEqual([
      400,
      'operator_logo_url refused: larger than 262144 bytes',
    ]);
    const svg = await put(`data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}`);
    expect([svg.status, svg.body.message]).toEqual([400, 'operator_logo_url must be a PNG, JPEG, GIF or WebP image']);
    await api.put('/api/settings', { allow_private_targets: false }, { token: adminToken() });
  });

  it('the address check itself', () => {
    for (const ip of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
    ]) {
      expect(isPrivateAddress(ip)).toBe(true);
    }
    for (const ip of ['::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::']) expect(isPrivateAddress(ip)).toBe(true);
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      expect(isPrivateAddress(ip)).toBe(false);
    }
  });

  it('refuses other schemes, credentials in the URL, multicast, documentation and reserved ranges', async () => {
    const why = (raw: string, allowPrivate = false) =>
      checkOutgoingUrl('f', raw, allowPrivate).then(
        () => 'allowed',
        (e: Error) => e.message,
      );
    expect(await why('ftp://8.8.8.8/x', true)).toBe('f refused: not http(s)');
    expect(await why('file:///etc/passwd', true)).toBe('f refused: not http(s)');
    expect(await why('https://user:pw@8.8.8.8/', true)).toBe('f refused: credentials in the URL');
    for (const host of [
      '224.0.0.1',
      '239.255.255.250',
      '[ff02::1]',
      '192.0.2.1',
      '198.51.100.7',
      '203.0.113.9',
      '[2001:db8::1]',
      '240.0.0.1',
      '[::ffff:169.254.169.254]',
    ]) {
      expect(await why(`http://${host}/`)).toBe('f refused: a loopback, private or reserved address');
    }
    expect(await why('https://8.8.8.8/')).toBe('allowed');
  });

  it('checks every resolved address again at connect time (the guarded lookup)', async () => {
    const resolve = (allowPrivate: boolean) =>
      new Promise<string>((done) =>
        guardedLookup(allowPrivate)('localhost', { all: false }, (err, address) =>
          done(err ? String((err as NodeJS.ErrnoException).code) : String(address)),
        ),
      );
    expect(await resolve(false)).toBe('EADDRNOTALLOWED');
    expect(await resolve(true)).toMatch(/^(127\.0\.0\.1|::1)$/);
  });
});

describe('/metrics on the public port', () => {
  it('needs the METRICS_TOKEN bearer', async () => {
    expect((await api.get('/metrics')).status).toBe(401);
    expect((await api.get('/metrics', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const ok = await api.get('/metrics', { headers: { authorization: `Bearer ${TEST_METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.text).toMatch(/process_cpu_user_seconds_total/);
  });

  it('each process serves its own on OPS_PORT without credentials', async () => {
    const ops = await startOpsServer(t.app.broker, 0);
    try {
      const res = await fetch(`http://127.0.0.1:${ops!.port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toMatch(/process_cpu_user_seconds_total/);
    } finally {
      await ops?.close();
    }
  });
});

describe('with a small rate limit and no METRICS_TOKEN', () => {
  let small: TestApp;
  beforeAll(async () => {
    // The same database: one process serves one.
    small = await startTestApp({ databaseUrl: t.databaseUrl, env: { RATE_LIMIT_PER_MIN: '150', METRICS_TOKEN: '' } });
  });
  afterAll(() => small?.close());

  it('/metrics is not served on the public port', async () => {
    const res = await client(small.baseUrl).get('/metrics');
    expect(res.status).toBe(404);
  });

  it('a bulk request weighs one rate-limit unit per 100 ids, charged after validation', async () => {
    const s = client(small.baseUrl);
    // A reseller without subscriber permissions: the job runs nothing, but the request is counted.
    const reseller = await seedReseller(small, 'Weighed');
    const tok = token('reseller', { resellerId: reseller.id, permissions: [] });
    const ids = Array.from({ length: 10_000 }, (_, i) => i + 1);
    // Refused by validation: one unit, not 100 (else the job below would not fit in 150).
    const invalid = await s.post('/api/subscribers/bulk-action', { ids, action: 'explode' }, { token: tok });
    expect(invalid.status).toBe(400);
    const first = await s.post('/api/subscribers/bulk-action', { ids, action: 'disconnect' }, { token: tok });
    expect(first.status).toBe(200);
    // 101 of 150 units spent: a second job of 10,000 ids does not fit, a small request still does.
    const second = await s.post('/api/subscribers/bulk-action', { ids, action: 'disconnect' }, { token: tok });
    expect(second.status).toBe(429);
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(
      (await s.post('/api/subscribers/bulk-action', { ids: [1], action: 'disconnect' }, { token: tok })).status,
    ).toBe(200);
  });
});
