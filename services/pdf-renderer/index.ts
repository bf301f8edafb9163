import type { ServiceSchema } from 'moleculer';

/** A warm Chromium and a bounded page pool: HTML in, PDF bytes out (issue: documents). */
export const pdfRendererSchemas: ServiceSchema[] = [{ name: 'pdf-renderer' }];
