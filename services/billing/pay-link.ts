/**
 * The receipt page's Pay link (docs/payments.md): shown when the payments service (billing unit)
 * says the invoice can be paid online now (a provider configured, a balance, an accepted currency).
 * A link rather than a form: the receipt's Content-Security-Policy allows no form submission, and
 * the checkout it opens is reused while open, so following it twice makes one checkout.
 */
import type { Context } from 'moleculer';

export async function payLink(
  ctx: Context<unknown>,
  invoiceId: number,
  token: string | undefined,
): Promise<string | null> {
  if (!token) return null;
  try {
    const ok = await ctx.call<boolean, { purpose: 'invoice'; invoiceId: number }>('payments.canPay', {
      purpose: 'invoice',
      invoiceId,
    });
    if (!ok) return null;
  } catch {
    // Payments not running here (SERVICES without it): the receipt without a Pay link.
    return null;
  }
  return `/api/payments/checkout/invoice/${invoiceId}?token=${encodeURIComponent(token)}`;
}
