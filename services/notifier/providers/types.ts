/**
 * One chat provider = one file implementing `ChatProvider`, plus a line in ./index.ts. The notifier
 * owns retries and the delivery log; a provider only speaks its API and classifies its failures.
 */
export interface OutgoingDocument {
  /** Already normalised by `recipient()`. */
  to: string;
  pdf: Buffer;
  filename: string;
  caption: string;
}

/** A plain text message (the lifecycle's expiry reminders). */
export interface OutgoingText {
  /** Already normalised by `recipient()`. */
  to: string;
  text: string;
}

export interface ChatProvider {
  readonly name: string;
  /** The provider's form of the recipient; throws `InvalidRecipientError` when it cannot be one. */
  recipient(phone: string): string;
  /** Resolves with the provider's message id. */
  send(doc: OutgoingDocument): Promise<{ messageId: string }>;
  /** Resolves with the provider's message id. */
  sendText(msg: OutgoingText): Promise<{ messageId: string }>;
}

/** The provider answered and refused (4xx): retrying the same request cannot help. */
export class ProviderRejectedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProviderRejectedError';
  }
}

/** Network failure, timeout, 5xx or 429: worth another attempt after a pause. */
export class TransientProviderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TransientProviderError';
  }
}

export class InvalidRecipientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidRecipientError';
  }
}

/** Settings lack what the chosen provider needs (or none is chosen). */
export class NotConfiguredError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'NotConfiguredError';
  }
}
