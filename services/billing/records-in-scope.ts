/** The invoice or subscriber an action names, after the policy's 404 / 403 rule for the caller. */
import type { Auth } from '../../shared/auth/claims';
import { assertRecordInScope } from '../../shared/auth/policy';
import { db } from '../../shared/db/client';
import { fail } from '../../shared/failures';
import { invoiceHead, subscriberHead } from './queries';

/** The invoice exists (404) and its reseller is in the caller's scope (403). */
export async function invoiceInScope(auth: Auth, id: number, access: 'read' | 'write') {
  const head = await invoiceHead(id);
  await assertRecordInScope(db(), auth, access, head?.resellerId, 'invoiceNotFound');
  return head!;
}

/**
 * The subscriber exists and is live and its reseller is in the caller's scope (403). Missing is
 * 404 `subscriber not found` for a path id, 400 `subscriber_id not found` for a body field.
 */
export async function subscriberInScope(auth: Auth, id: number, access: 'read' | 'write', from: 'path' | 'body' = 'path') {
  const head = await subscriberHead(id);
  if (!head) throw from === 'path' ? fail('subscriberNotFound') : fail('referenceNotFound', 'subscriber_id');
  await assertRecordInScope(db(), auth, access, head.resellerId, 'subscriberNotFound');
  return head;
}
