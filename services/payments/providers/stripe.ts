/**
 * Stripe through the official `stripe` package: Checkout Sessions in `payment` mode, and webhooks
 * verified with `stripe.webhooks.constructEvent` (the package's own HMAC check of the
 * `Stripe-Signature` header over the raw body, with its timestamp tolerance). The API's host, port
 * and protocol come from `stripe_api_base_url`, so tests talk to a local double (test/sim/stripe-double.ts).
 */
import Stripe from 'stripe';
import type { Settings } from '../../../shared/settings';
import { NotConfiguredError, SignatureError, type PaymentProvider, type ProviderEvent } from './types';

export function stripeProvider(s: Settings, timeoutMs: number): PaymentProvider {
  if (!s.stripe_secret_key) throw new NotConfiguredError('stripe_secret_key is not set');
  if (!s.stripe_webhook_secret) throw new NotConfiguredError('stripe_webhook_secret is not set');
  const base = new URL(s.stripe_api_base_url || 'https://api.stripe.com');
  const protocol = base.protocol === 'http:' ? 'http' : 'https';
  const stripe = new Stripe(s.stripe_secret_key, {
    host: base.hostname,
    port: base.port ? Number(base.port) : protocol === 'http' ? 80 : 443,
    protocol,
    timeout: timeoutMs,
    maxNetworkRetries: 2,
    telemetry: false,
  });
  const webhookSecret = s.stripe_webhook_secret;

  return {
    name: 'stripe',

    async createCheckout(req) {
      const session = await stripe.checkout.sessions.create(
        {
          mode: 'payment',
          client_reference_id: String(req.checkoutId),
          metadata: { checkout_id: String(req.checkoutId) },
          line_items: [
            {
              quantity: 1,
              price_data: {
                currency: req.currency.toLowerCase(),
                unit_amount: req.amount,
                product_data: { name: req.description },
              },
            },
          ],
          success_url: req.successUrl,
          cancel_url: req.cancelUrl,
        },
        // A retried create (network failure) makes no second session.
        { idempotencyKey: `checkout-${req.checkoutId}` },
      );
      if (!session.url) throw new Error('Stripe returned a session without url');
      return { sessionId: session.id, url: session.url };
    },

    verifyWebhook(rawBody, headers) {
      const signature = headers['stripe-signature'];
      if (!signature) throw new SignatureError('Stripe-Signature header missing');
      let event: Stripe.Event;
      try {
        event = stripe.webhooks.constructEvent(rawBody, signature, webhookSecret);
      } catch (err) {
        throw new SignatureError((err as Error).message);
      }
      return eventOf(event);
    },
  };
}

function eventOf(event: Stripe.Event): ProviderEvent {
  const base = { eventId: event.id, type: event.type };
  const none = { checkoutId: null, sessionId: null, amount: null, currency: null, reference: null };
  if (
    event.type !== 'checkout.session.completed' &&
    event.type !== 'checkout.session.async_payment_succeeded' &&
    event.type !== 'checkout.session.expired'
  )
    return { ...base, kind: 'ignored', ...none };
  const session = event.data.object;
  const id = Number(session.metadata?.checkout_id ?? session.client_reference_id);
  const checkoutId = Number.isSafeInteger(id) && id > 0 ? id : null;
  const ref =
    typeof session.payment_intent === 'string' ? session.payment_intent : (session.payment_intent?.id ?? null);
  const paid = event.type !== 'checkout.session.expired' && session.payment_status === 'paid';
  return {
    ...base,
    kind: event.type === 'checkout.session.expired' ? 'expired' : paid ? 'paid' : 'ignored',
    checkoutId,
    sessionId: session.id,
    amount: session.amount_total,
    currency: session.currency ? session.currency.toUpperCase() : null,
    reference: ref ?? session.id,
  };
}
