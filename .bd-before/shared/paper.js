"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.PAPER_NAMES = exports.PAPER_SIZES = void 0;
exports.isPaperSize = isPaperSize;
/** The 17 paper sizes of the PDF routes (spec 4.1: `paper`). Dimensions in millimetres; a height of
 * null means a receipt roll whose page is as long as its content. */
exports.PAPER_SIZES = {
    A3: { width: 297, height: 420 },
    A4: { width: 210, height: 297 },
    A5: { width: 148, height: 210 },
    A6: { width: 105, height: 148 },
    B4: { width: 250, height: 353 },
    B5: { width: 176, height: 250 },
    Letter: { width: 215.9, height: 279.4 },
    Legal: { width: 215.9, height: 355.6 },
    Tabloid: { width: 279.4, height: 431.8 },
    Ledger: { width: 431.8, height: 279.4 },
    Executive: { width: 184.15, height: 266.7 },
    Statement: { width: 139.7, height: 215.9 },
    Folio: { width: 215.9, height: 330.2 },
    /** C5 envelope. */
    C5: { width: 162, height: 229 },
    /** DL envelope. */
    DL: { width: 110, height: 220 },
    /** Thermal receipt rolls. */
    Receipt80: { width: 80, height: null },
    Receipt58: { width: 58, height: null },
};
exports.PAPER_NAMES = Object.keys(exports.PAPER_SIZES);
function isPaperSize(name) {
    return typeof name === 'string' && Object.prototype.hasOwnProperty.call(exports.PAPER_SIZES, name);
}
//# sourceMappingURL=paper.js.map