/** One HTTP call to a provider, its failure sorted into rejected (4xx) or transient (the rest). */
import { ProviderRejectedError, TransientProviderError } from './types';

export async function callProvider(
  url: string,
  init: RequestInit,
  timeoutMs: number,
  errorText: (body: unknown, status: number) => string,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    throw new TransientProviderError(`network error: ${cause ?? (err as Error).message}`);
  }
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Proxies and load balancers answer HTML; keep the text for the message.
  }
  if (res.ok) return body;
  const message = errorText(body, res.status);
  if (res.status >= 500 || res.status === 429) throw new TransientProviderError(message);
  throw new ProviderRejectedError(message);
}

/** A short, single-line excerpt of a body that was not the provider's JSON. */
export function excerpt(body: unknown, status: number): string {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return `HTTP ${status}: ${text.replace(/\s+/g, ' ').slice(0, 200)}`;
}
