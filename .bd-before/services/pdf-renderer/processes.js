"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.browserPidsOf = browserPidsOf;
/**
 * Playwright's `Browser` does not expose its process, yet a hung browser must be killable. On Linux
 * the browser is our direct child, so it is found in /proc; elsewhere this returns nothing and a
 * hung browser is left to Playwright's own close.
 */
const node_fs_1 = __importDefault(require("node:fs"));
function browserPidsOf(parentPid) {
    let entries;
    try {
        entries = node_fs_1.default.readdirSync('/proc');
    }
    catch {
        return [];
    }
    const pids = [];
    for (const name of entries) {
        if (!/^\d+$/.test(name))
            continue;
        try {
            // Field 4 of /proc/<pid>/stat is the parent pid; the command name in field 2 may hold spaces.
            const stat = node_fs_1.default.readFileSync(`/proc/${name}/stat`, 'utf8');
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            if (ppid !== parentPid)
                continue;
            const cmdline = node_fs_1.default.readFileSync(`/proc/${name}/cmdline`, 'utf8');
            if (/chrom/i.test(cmdline))
                pids.push(Number(name));
        }
        catch {
            // The process exited while we looked.
        }
    }
    return pids;
}
//# sourceMappingURL=processes.js.map