/** Shared set-up of the self-care tests (docs/self-care.md): an app, a reseller, plans and subscribers. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { adminToken, client, startTestApp, type TestApp } from '../helpers/app';
import { waitFor } from '../helpers/wait';

export const admin = adminToken();

export interface SelfCareWorld {
  t: TestApp;
  api: ReturnType<typeof client>;
  reseller: number;
  plan: number;
  mkSub(extra?: Record<string, unknown>): Promise<{ id: number; username: string; password: string }>;
  signIn(username: string, password: string): Promise<string>;
  setSettings(values: Record<string, unknown>): Promise<void>;
}

let seq = 0;

export async function selfCareWorld(env: Record<string, string> = {}): Promise<SelfCareWorld> {
  const t = await startTestApp({ env });
  const api = client(t.baseUrl);
  const r = await api.post('/api/resellers', { name: 'north', balance: 1000, currency: 'USD' }, { token: admin });
  if (r.status !== 201) throw new Error(`reseller: ${r.status} ${r.text}`);
  const reseller = r.body.data.id as number;
  const p = await api.post(
    '/api/services',
    { name: 'home', price: 10, duration_days: 30, currency: 'USD', monthly_quota_gb: 100 },
    { token: admin },
  );
  if (p.status !== 201) throw new Error(`plan: ${p.status} ${p.text}`);
  const plan = p.body.data.id as number;
  await api.post(
    `/api/resellers/${reseller}/service-limits`,
    { service_id: plan, max_subscribers: null },
    { token: admin },
  );
  return {
    t,
    api,
    reseller,
    plan,
    async mkSub(extra = {}) {
      seq += 1;
      const password = `pppoe-pass-${seq}`;
      const res = await api.post(
        '/api/subscribers',
        { username: `home${seq}`, password, service_id: plan, reseller_id: reseller, ...extra },
        { token: admin },
      );
      if (res.status !== 201) throw new Error(`subscriber: ${res.status} ${res.text}`);
      return { id: res.body.data.id, username: res.body.data.username, password };
    },
    async signIn(username, password) {
      const res = await api.post('/api/my/login', { username, password });
      if (res.status !== 200) throw new Error(`sign-in: ${res.status} ${res.text}`);
      return res.body.data.token as string;
    },
    async setSettings(values) {
      const res = await api.put('/api/settings', values, { token: admin });
      if (res.status !== 200) throw new Error(`settings: ${res.status} ${res.text}`);
    },
  };
}

/** The chat double: a Telegram Bot API that records every message it is asked to send. */
export class ChatDouble {
  received: { chat_id: string; text: string }[] = [];
  private next = 1;
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const json = JSON.parse(Buffer.concat(chunks).toString() || '{}') as { chat_id: string; text: string };
      this.received.push({ chat_id: String(json.chat_id), text: json.text });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, result: { message_id: this.next++, chat: { id: Number(json.chat_id) } } }));
    });
  });

  async start(): Promise<string> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  /** The code in the latest message to `chat`, waiting for it to arrive. */
  async codeFor(chat: string, after = 0): Promise<string> {
    // The code is sent in the background; the first send of a run is cold code, slow on a loaded machine.
    const mine = await waitFor(`a message to ${chat}`, () => {
      const got = this.received.filter((m) => m.chat_id === chat);
      return got.length > after && got;
    });
    return /\b(\d{6})\b/.exec(mine[mine.length - 1].text)![1];
  }
}
