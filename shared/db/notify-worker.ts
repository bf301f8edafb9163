/**
 * A worker woken by PostgreSQL: LISTEN on a channel that a trigger NOTIFYs (delivered at commit),
 * and a poll every `pollMs` as a safety net (a lost LISTEN connection, work that falls due later).
 * One drain runs at a time; a wake-up during a drain runs it once more afterwards, so nothing
 * notified meanwhile waits for the next poll. Used by the outbox relay and webhook delivery.
 */
import { Client } from 'pg';
import { config } from '../config';
import { resolveUrl } from './hosts';

export interface NotifyWorkerOptions {
  /** Who works, in log lines ('outbox', 'webhook delivery'). */
  name: string;
  /** The NOTIFY channel, a plain identifier. */
  channel: string;
  /** Poll interval, also the wait before LISTEN is tried again after a lost connection. */
  pollMs: number;
  logger: { warn(...args: unknown[]): void };
  /** Does the waiting work until none is left; `stopping` says to return early at a safe point. */
  drain(stopping: () => boolean): Promise<void>;
  /** Work of each poll before its wake-up (the relay's redelivery sweep). */
  sweep?(): Promise<void>;
}

export class NotifyWorker {
  private listener?: Client;
  private timer?: NodeJS.Timeout;
  /** The next LISTEN attempt after a lost or failed connection; cleared on stop. */
  private reconnect?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopping = false;

  constructor(private readonly o: NotifyWorkerOptions) {}

  /** Listens (or, when PostgreSQL refuses, polls until it can), starts the poll, drains once. */
  async start(): Promise<void> {
    await this.listen().catch((err: Error) => {
      this.o.logger.warn(`${this.o.name} LISTEN unavailable; polling until it connects`, err.message);
      this.scheduleListen();
    });
    this.timer = setInterval(() => void this.poll(), this.o.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Ends the poll and LISTEN after the drain in progress. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.reconnect);
    await this.running;
    await this.listener?.end().catch(() => undefined);
  }

  /** Drains now, or once more after the drain in progress when one is running. */
  wake(): void {
    if (this.stopping) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.o.drain(() => this.stopping);
        } catch (err) {
          this.o.logger.warn(`${this.o.name} run failed; the next wake-up retries`, err);
        }
      } while (this.again && !this.stopping);
    })().finally(() => {
      this.running = undefined;
    });
  }

  private async poll(): Promise<void> {
    if (this.o.sweep) {
      try {
        await this.o.sweep();
      } catch (err) {
        this.o.logger.warn(`${this.o.name} sweep failed`, err);
      }
    }
    this.wake();
  }

  /** LISTEN again in a while; meanwhile the poll keeps the work moving. */
  private scheduleListen(): void {
    if (this.stopping) return;
    clearTimeout(this.reconnect);
    this.reconnect = setTimeout(() => void this.listen().catch(() => this.scheduleListen()), this.o.pollMs);
    this.reconnect.unref();
  }

  private async listen(): Promise<void> {
    if (this.stopping) return;
    // Resolved at each (re)connect: after a failover the LISTEN goes to the new primary.
    const url = config().databaseUrl;
    const client = new Client({ connectionString: url && (await resolveUrl(url)) });
    client.on('error', (err) => {
      this.o.logger.warn(`${this.o.name} LISTEN connection lost`, err.message);
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      this.scheduleListen();
    });
    client.on('notification', () => this.wake());
    try {
      await client.connect();
      await client.query(`listen ${this.o.channel}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    // Stopped while connecting: nobody would close this connection later.
    if (this.stopping) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
  }
}
