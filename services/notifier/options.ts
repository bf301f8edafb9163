/** Notifier tuning from the environment (documented in docs/documents.md). */
import { intVar } from '../../shared/config';

export interface NotifierOptions {
  /** Attempts per delivery, the first included. */
  maxAttempts: number;
  /** Pause before the second attempt; each later pause doubles. */
  retryBaseMs: number;
  /** Deadline of one HTTP call to the provider. */
  httpTimeoutMs: number;
  /** Largest PDF accepted from the renderer (WhatsApp documents stop at 100 MB, Telegram bots at 50 MB). */
  maxPdfBytes: number;
}

export function notifierOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): NotifierOptions {
  return {
    maxAttempts: Math.max(1, intVar(env, 'NOTIFIER_MAX_ATTEMPTS', 3)),
    retryBaseMs: intVar(env, 'NOTIFIER_RETRY_BASE_MS', 500),
    // 3 attempts x 10 s + pauses stay under the broker's 60 s request timeout.
    httpTimeoutMs: Math.max(1, intVar(env, 'NOTIFIER_HTTP_TIMEOUT_MS', 10_000)),
    maxPdfBytes: 20 * 1024 * 1024,
  };
}
