/** The six deployment units; `SERVICES=a,b` loads some, the embedded default loads all. */
import type { ServiceSchema } from 'moleculer';
import { billingSchemas } from './billing';
import { gatewaySchemas } from './gateway';
import { networkAccessSchemas } from './network-access';
import { notifierSchemas } from './notifier';
import { pdfRendererSchemas } from './pdf-renderer';
import { subscribersSchemas } from './subscribers';

export const UNITS: Record<string, () => ServiceSchema[]> = {
  gateway: gatewaySchemas,
  billing: () => billingSchemas,
  subscribers: () => subscribersSchemas,
  'network-access': () => networkAccessSchemas,
  'pdf-renderer': () => pdfRendererSchemas,
  notifier: () => notifierSchemas,
};

export const UNIT_NAMES = Object.keys(UNITS);

export function schemasFor(units: string[] | undefined): ServiceSchema[] {
  const chosen = units ?? UNIT_NAMES;
  const unknown = chosen.filter((u) => !UNITS[u]);
  if (unknown.length) throw new Error(`unknown service(s) in SERVICES: ${unknown.join(', ')} (known: ${UNIT_NAMES.join(', ')})`);
  return chosen.flatMap((u) => UNITS[u]());
}
