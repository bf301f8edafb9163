/**
 * One online payment provider = one file implementing `PaymentProvider`, plus a line in ./index.ts
 * (docs/payments.md has the recipe). The payments service owns the checkouts table, the
 * exactly-once bookkeeping and the money; a provider only speaks its API and checks its signatures.
 */
export interface CheckoutRequest {
  /** Our checkout row's id: the provider keeps it (metadata) and hands it back in its events. */
  checkoutId: number;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  description: string;
  successUrl: string;
  cancelUrl: string;
}

export interface CreatedCheckout {
  /** The provider's id of it (Stripe: `cs_...`). */
  sessionId: string;
  /** Where the payer is sent. */
  url: string;
}

/** What a verified webhook event means to us. */
export interface ProviderEvent {
  /** Unique per event at the provider, the same on every retry of it. */
  eventId: string;
  /** `paid`: the checkout's money arrived; `expired`: it never will; `ignored`: any other event. */
  kind: 'paid' | 'expired' | 'ignored';
  type: string;
  /**
   * The checkout the event names (Stripe: metadata or `client_reference_id`). Whoever makes a
   * session chooses it, so it never finds the checkout; it only tells an early event (settle.ts).
   */
  checkoutId: number | null;
  /** The provider's id of the checkout: what finds ours. */
  sessionId: string | null;
  /** Minor units actually paid, and in which currency (on `paid`). */
  amount: number | null;
  currency: string | null;
  /** The provider's reference of the payment (Stripe: the PaymentIntent `pi_...`). */
  reference: string | null;
}

export interface PaymentProvider {
  readonly name: string;
  createCheckout(req: CheckoutRequest): Promise<CreatedCheckout>;
  /**
   * The event of a webhook request, verified against its signature with the provider's own
   * function; throws `SignatureError` when the signature is missing or does not verify.
   */
  verifyWebhook(rawBody: string, headers: Record<string, string | undefined>): ProviderEvent;
}

export class SignatureError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignatureError';
  }
}

/** Settings lack what the chosen provider needs (or none is chosen). */
export class NotConfiguredError extends Error {
  constructor(detail: string) {
    super(detail);
    this.name = 'NotConfiguredError';
  }
}
