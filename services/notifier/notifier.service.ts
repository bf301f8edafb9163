/**
 * `notifier`: sends a PDF (arriving as a stream: it may come over NATS) to a chat through the
 * provider chosen in settings. One `deliveries` row per send records the provider, recipient,
 * attempts, outcome, the provider's message id or its error. Transient failures (network, 5xx,
 * 429) are retried with exponential backoff; a rejection (4xx) is final and quoted to the caller.
 * `sendText` sends a text message the same way (retries, recipient check); its caller keeps the
 * record (the lifecycle's `notifications` rows), so it writes no `deliveries` row.
 */
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq } from 'drizzle-orm';
import type { Context, ServiceSchema } from 'moleculer';
import { db } from '../../shared/db/client';
import { deliveries } from '../../shared/db/schema';
import { fail } from '../../shared/failures';
import { checkOutgoingUrl } from '../../shared/net/address-policy';
import { loadSettings } from '../../shared/settings';
import { notifierOptionsFromEnv, type NotifierOptions } from './options';
import { providerFor } from './providers';
import {
  InvalidRecipientError,
  NotConfiguredError,
  ProviderRejectedError,
  TransientProviderError,
  type ChatProvider,
} from './providers/types';

/** Beside the PDF stream (the params), `ctx.meta.delivery` says what to send where. */
export interface DeliveryMeta {
  delivery: {
    invoiceId: number | null;
    invoiceIds: number[];
    subscriberId: number | null;
    phone: string;
    caption: string;
    filename: string;
    createdBy: number | null;
  };
}

async function configuredProvider(timeoutMs: number): Promise<ChatProvider> {
  try {
    const s = await loadSettings(db());
    // The address policy again at sending time (docs/security.md): a URL stored before it, or
    // allow_private_targets turned off since, must not receive the token.
    const base = { whatsapp: s.whatsapp_base_url, telegram: s.telegram_base_url }[s.messaging_provider];
    if (base) await checkOutgoingUrl(`${s.messaging_provider}_base_url`, base, s.allow_private_targets === true);
    return providerFor(s, timeoutMs);
  } catch (err) {
    if (err instanceof NotConfiguredError) throw fail('messagingNotConfigured', err.message);
    throw err;
  }
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += buf.length;
    if (size > limit) throw fail('documentTooLarge', limit);
    parts.push(buf);
  }
  return Buffer.concat(parts);
}

/** The failure of the catalogue for a send that failed for good after `attempt` attempts. */
function finalFailure(err: unknown, provider: string, attempt: number) {
  const message = (err as Error).message;
  if (err instanceof ProviderRejectedError) return fail('providerRejected', provider, message);
  if (err instanceof TransientProviderError) return fail('providerUnavailable', provider, attempt, message);
  return fail('providerUnexpected', provider, message);
}

function recipientOf(provider: ChatProvider, phone: string): string {
  try {
    return provider.recipient(phone);
  } catch (err) {
    if (err instanceof InvalidRecipientError) throw fail('recipientInvalid', err.message);
    throw err;
  }
}

async function record(id: number, changes: Partial<typeof deliveries.$inferInsert>): Promise<void> {
  await db()
    .update(deliveries)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(deliveries.id, id));
}

export function createNotifierService(overrides: Partial<NotifierOptions> = {}): ServiceSchema {
  // Read when the service is created, not when this module is imported, so the environment of the
  // process that starts the broker applies. Set before any action can run.
  let opts!: NotifierOptions;

  return {
    name: 'notifier',
    created() {
      opts = { ...notifierOptionsFromEnv(), ...overrides };
    },
    actions: {
      /** 409 unless a provider is chosen and has its credentials: checked before anything is rendered. */
      ready: {
        visibility: 'public',
        async handler(): Promise<{ provider: string }> {
          return { provider: (await configuredProvider(opts.httpTimeoutMs)).name };
        },
      },

      send: {
        visibility: 'public',
        async handler(
          ctx: Context<Readable, DeliveryMeta>,
        ): Promise<{ delivery_id: number; provider: string; status: string }> {
          const request = ctx.meta.delivery;
          const provider = await configuredProvider(opts.httpTimeoutMs);
          const to = recipientOf(provider, request.phone);
          const pdf = await readAll(ctx.params, opts.maxPdfBytes);
          const [row] = await db()
            .insert(deliveries)
            .values({
              invoiceId: request.invoiceId,
              subscriberId: request.subscriberId,
              invoiceIds: request.invoiceIds,
              provider: provider.name,
              phone: to,
              status: 'sending',
              createdBy: request.createdBy,
            })
            .returning({ id: deliveries.id });

          for (let attempt = 1; ; attempt++) {
            try {
              const { messageId } = await provider.send({
                to,
                pdf,
                filename: request.filename,
                caption: request.caption,
              });
              await record(row.id, { status: 'sent', attempts: attempt, providerMessageId: messageId, error: null });
              return { delivery_id: row.id, provider: provider.name, status: 'sent' };
            } catch (err) {
              const message = (err as Error).message;
              if (err instanceof TransientProviderError && attempt < opts.maxAttempts) {
                await record(row.id, { attempts: attempt, error: message });
                this.logger.warn(`notifier: ${provider.name} attempt ${attempt} failed, retrying`, message);
                await sleep(opts.retryBaseMs * 2 ** (attempt - 1));
                continue;
              }
              await record(row.id, { status: 'failed', attempts: attempt, error: message });
              throw finalFailure(err, provider.name, attempt);
            }
          }
        },
      },

      /**
       * One text message to `phone` through the configured provider, with the retries of `send`.
       * Not idempotent (a retry by the broker could send twice): the caller records the outcome.
       */
      sendText: {
        visibility: 'public',
        async handler(
          ctx: Context<{ phone: string; text: string }>,
        ): Promise<{ provider: string; recipient: string; message_id: string; attempts: number }> {
          const provider = await configuredProvider(opts.httpTimeoutMs);
          const to = recipientOf(provider, ctx.params.phone);
          for (let attempt = 1; ; attempt++) {
            try {
              const { messageId } = await provider.sendText({ to, text: ctx.params.text });
              return { provider: provider.name, recipient: to, message_id: messageId, attempts: attempt };
            } catch (err) {
              if (err instanceof TransientProviderError && attempt < opts.maxAttempts) {
                this.logger.warn(
                  `notifier: ${provider.name} text attempt ${attempt} failed, retrying`,
                  (err as Error).message,
                );
                await sleep(opts.retryBaseMs * 2 ** (attempt - 1));
                continue;
              }
              throw finalFailure(err, provider.name, attempt);
            }
          }
        },
      },
    },
  };
}
