/**
 * The six deployment units and the Moleculer services each runs; `SERVICES=a,b` loads some, the
 * embedded default loads all. A service folder under services/ is named after the route prefix
 * it serves (README: "Where the code is"); a unit groups folders that scale together.
 */
import type { ServiceSchema } from 'moleculer';
import { apiKeysService } from '../services/api-keys/api-keys.service';
import { auditService } from '../services/audit/audit.service';
import { backupsSchemas } from '../services/backups';
import { authSchemas } from '../services/auth';
import { billingSchemas } from '../services/billing';
import { cardsSchemas } from '../services/cards';
import { paymentsSchemas } from '../services/payments';
import { reportsSchemas } from '../services/reports';
import { gatewaySchemas } from '../services/gateway';
import { importSchemas } from '../services/import';
import { managersService } from '../services/managers/managers.service';
import { networkAccessSchemas } from '../services/network-access';
import { notifierSchemas } from '../services/notifier';
import { pdfRendererSchemas } from '../services/pdf-renderer';
import { plansService } from '../services/plans/plans.service';
import { selfCareSchemas } from '../services/self-care';
import { resellersService } from '../services/resellers/resellers.service';
import { settingsService } from '../services/settings/settings.service';
import { subscribersSchemas } from '../services/subscribers';
import { webhooksSchemas } from '../services/webhooks';

export const UNITS: Record<string, () => ServiceSchema[]> = {
  gateway: gatewaySchemas,
  billing: () => [...billingSchemas, ...cardsSchemas, ...paymentsSchemas, ...reportsSchemas],
  // Subscribers and the reference data they stand on: identity, resellers, plans, settings.
  subscribers: () => [
    ...subscribersSchemas,
    ...authSchemas,
    managersService,
    apiKeysService,
    auditService,
    resellersService,
    plansService,
    settingsService,
    ...importSchemas,
    ...backupsSchemas,
    ...selfCareSchemas,
  ],
  'network-access': () => networkAccessSchemas,
  'pdf-renderer': () => pdfRendererSchemas,
  // What the server sends out on its own: chat messages and outgoing webhooks.
  notifier: () => [...notifierSchemas, ...webhooksSchemas],
};

export const UNIT_NAMES = Object.keys(UNITS);

export function schemasFor(units: string[] | undefined): ServiceSchema[] {
  const chosen = units ?? UNIT_NAMES;
  const unknown = chosen.filter((u) => !UNITS[u]);
  if (unknown.length)
    throw new Error(`unknown service(s) in SERVICES: ${unknown.join(', ')} (known: ${UNIT_NAMES.join(', ')})`);
  return chosen.flatMap((u) => UNITS[u]());
}
