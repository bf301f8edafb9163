import type { ServiceSchema } from 'moleculer';
import { reportsService } from './reports.service';

/** The dashboard and the reports (issue 38, docs/reports.md). Runs in the billing unit, beside the ledger. */
export const reportsSchemas: ServiceSchema[] = [reportsService];
