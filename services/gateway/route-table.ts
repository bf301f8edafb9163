/**
 * Every route of the HTTP API. Each service declares its own in services/<name>/routes.ts (data
 * only: paths, schemas, access); the gateway validates and documents from this one list.
 */
import type { RouteDef } from '../../shared/http/route';
import { routes as billing } from '../billing/routes';
import { routes as invoiceDocuments } from '../billing/document-routes';
import { routes as networkAccess } from '../network-access/routes';
import { routes as notifier } from '../notifier/routes';
import { routes as pdfRenderer } from '../pdf-renderer/routes';
import { routes as subscribers } from '../subscribers/routes';
import { routes as gateway } from './routes';

export function allRoutes(): RouteDef[] {
  return [...gateway, ...subscribers, ...billing, ...invoiceDocuments, ...networkAccess, ...pdfRenderer, ...notifier];
}
