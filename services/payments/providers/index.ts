/** The payment providers by the name `payment_provider` holds. A new provider: a file and a line here. */
import type { Settings } from '../../../shared/settings';
import { stripeProvider } from './stripe';
import { NotConfiguredError, type PaymentProvider } from './types';

const PROVIDERS: Record<string, (s: Settings, timeoutMs: number) => PaymentProvider> = {
  stripe: stripeProvider,
};

export const PROVIDER_NAMES = Object.keys(PROVIDERS);

/** The provider `name` as the settings configure it; NotConfiguredError when they do not. */
export function providerNamed(name: string, s: Settings, timeoutMs = 15_000): PaymentProvider {
  const make = PROVIDERS[name];
  if (!make) throw new NotConfiguredError(`unknown provider ${name}`);
  return make(s, timeoutMs);
}

/** The provider the Pay buttons use (setting `payment_provider`), or null when none is chosen. */
export function activeProvider(s: Settings, timeoutMs = 15_000): PaymentProvider | null {
  if (s.payment_provider === 'none' || !PROVIDERS[s.payment_provider]) return null;
  return providerNamed(s.payment_provider, s, timeoutMs);
}
