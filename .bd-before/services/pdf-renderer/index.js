"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.pdfRendererSchemas = void 0;
const pdf_renderer_service_1 = require("./pdf-renderer.service");
/** A warm Chromium and a bounded page pool: HTML in, PDF bytes out (docs/documents.md). */
exports.pdfRendererSchemas = [(0, pdf_renderer_service_1.createPdfRendererService)()];
//# sourceMappingURL=index.js.map