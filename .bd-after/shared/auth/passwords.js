"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.hashPassword = hashPassword;
exports.verifyPassword = verifyPassword;
const bcryptjs_1 = __importDefault(require("bcryptjs"));
const COST = Number(process.env.BCRYPT_COST || 11);
let dummyHash;
function hashPassword(plain) {
    return bcryptjs_1.default.hash(plain, COST);
}
/** With no stored hash (unknown user) it still spends a full comparison, so timing tells nothing. */
async function verifyPassword(plain, hash) {
    if (hash)
        return bcryptjs_1.default.compare(plain, hash);
    dummyHash ??= bcryptjs_1.default.hash('no such user', COST);
    await bcryptjs_1.default.compare(plain, await dummyHash);
    return false;
}
//# sourceMappingURL=passwords.js.map