/** The chat providers by the name `messaging_provider` holds. A new provider: a file and a line here. */
import type { Settings } from '../../../shared/settings';
import { telegramProvider } from './telegram';
import { NotConfiguredError, type ChatProvider } from './types';
import { whatsappProvider } from './whatsapp';

const PROVIDERS: Record<string, (s: Settings, timeoutMs: number) => ChatProvider> = {
  whatsapp: whatsappProvider,
  telegram: telegramProvider,
};

export function providerFor(s: Settings, timeoutMs: number): ChatProvider {
  const make = PROVIDERS[s.messaging_provider];
  if (!make) throw new NotConfiguredError('messaging_provider is not set');
  return make(s, timeoutMs);
}
