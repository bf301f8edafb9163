import type { ServiceSchema } from 'moleculer';
import { createNotifierService } from './notifier.service';

/** Chat delivery of invoice PDFs, retries and the delivery log (docs/documents.md). */
export const notifierSchemas: ServiceSchema[] = [createNotifierService()];
