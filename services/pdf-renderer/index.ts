import type { ServiceSchema } from 'moleculer';
import { createPdfRendererService } from './pdf-renderer.service';

/** A warm Chromium and a bounded page pool: HTML in, PDF bytes out (docs/documents.md). */
export const pdfRendererSchemas: ServiceSchema[] = [createPdfRendererService()];
