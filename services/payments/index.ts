import type { ServiceSchema } from 'moleculer';
import { paymentsService } from './payments.service';

/** Online payments (issue 27): checkouts, the provider webhook, reconciliation. Runs in the billing unit. */
export const paymentsSchemas: ServiceSchema[] = [paymentsService];
