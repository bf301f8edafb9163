"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.repoRoot = repoRoot;
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
let root;
/** The folder holding package.json, whether running from sources or from dist/. */
function repoRoot() {
    if (root)
        return root;
    let dir = __dirname;
    while (!node_fs_1.default.existsSync(node_path_1.default.join(dir, 'package.json'))) {
        const parent = node_path_1.default.dirname(dir);
        if (parent === dir)
            throw new Error('package.json not found above ' + __dirname);
        dir = parent;
    }
    root = dir;
    return root;
}
//# sourceMappingURL=paths.js.map