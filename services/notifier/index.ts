import type { ServiceSchema } from 'moleculer';

/** Chat delivery of invoice PDFs, retries and the delivery log (issue: documents). */
export const notifierSchemas: ServiceSchema[] = [{ name: 'notifier' }];
