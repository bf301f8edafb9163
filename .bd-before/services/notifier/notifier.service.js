"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.createNotifierService = createNotifierService;
const promises_1 = require("node:timers/promises");
const drizzle_orm_1 = require("drizzle-orm");
const client_1 = require("../../shared/db/client");
const schema_1 = require("../../shared/db/schema");
const errors_1 = require("../../shared/errors");
const settings_1 = require("../../shared/settings");
const options_1 = require("./options");
const providers_1 = require("./providers");
const types_1 = require("./providers/types");
async function configuredProvider(timeoutMs) {
    try {
        return (0, providers_1.providerFor)(await (0, settings_1.loadSettings)((0, client_1.db)()), timeoutMs);
    }
    catch (err) {
        if (err instanceof types_1.NotConfiguredError)
            throw (0, errors_1.conflict)(`no messaging account configured (${err.message})`);
        throw err;
    }
}
async function readAll(stream, limit) {
    const parts = [];
    let size = 0;
    for await (const chunk of stream) {
        const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        size += buf.length;
        if (size > limit)
            throw new errors_1.ApiError(413, `document larger than ${limit} bytes`);
        parts.push(buf);
    }
    return Buffer.concat(parts);
}
async function record(id, changes) {
    await (0, client_1.db)().update(schema_1.deliveries).set({ ...changes, updatedAt: new Date() }).where((0, drizzle_orm_1.eq)(schema_1.deliveries.id, id));
}
function createNotifierService(overrides = {}) {
    // Read when the service is created, not when this module is imported, so the environment of the
    // process that starts the broker applies. Set before any action can run.
    let opts;
    return {
        name: 'notifier',
        created() {
            opts = { ...(0, options_1.notifierOptionsFromEnv)(), ...overrides };
        },
        actions: {
            /** 409 unless a provider is chosen and has its credentials: checked before anything is rendered. */
            ready: {
                visibility: 'public',
                async handler() {
                    return { provider: (await configuredProvider(opts.httpTimeoutMs)).name };
                },
            },
            send: {
                visibility: 'public',
                async handler(ctx) {
                    const request = ctx.meta.delivery;
                    const provider = await configuredProvider(opts.httpTimeoutMs);
                    let to;
                    try {
                        to = provider.recipient(request.phone);
                    }
                    catch (err) {
                        if (err instanceof types_1.InvalidRecipientError)
                            throw (0, errors_1.badRequest)(err.message);
                        throw err;
                    }
                    const pdf = await readAll(ctx.params, opts.maxPdfBytes);
                    const [row] = await (0, client_1.db)()
                        .insert(schema_1.deliveries)
                        .values({
                        invoiceId: request.invoiceId,
                        subscriberId: request.subscriberId,
                        invoiceIds: request.invoiceIds,
                        provider: provider.name,
                        phone: to,
                        status: 'sending',
                        createdBy: request.createdBy,
                    })
                        .returning({ id: schema_1.deliveries.id });
                    for (let attempt = 1;; attempt++) {
                        try {
                            const { messageId } = await provider.send({ to, pdf, filename: request.filename, caption: request.caption });
                            await record(row.id, { status: 'sent', attempts: attempt, providerMessageId: messageId, error: null });
                            return { delivery_id: row.id, provider: provider.name, status: 'sent' };
                        }
                        catch (err) {
                            const message = err.message;
                            if (err instanceof types_1.TransientProviderError && attempt < opts.maxAttempts) {
                                await record(row.id, { attempts: attempt, error: message });
                                this.logger.warn(`notifier: ${provider.name} attempt ${attempt} failed, retrying`, message);
                                await (0, promises_1.setTimeout)(opts.retryBaseMs * 2 ** (attempt - 1));
                                continue;
                            }
                            await record(row.id, { status: 'failed', attempts: attempt, error: message });
                            if (err instanceof types_1.ProviderRejectedError)
                                throw new errors_1.ApiError(502, `${provider.name} rejected the message: ${message}`);
                            if (err instanceof types_1.TransientProviderError) {
                                throw new errors_1.ApiError(503, `${provider.name} unavailable after ${attempt} attempts: ${message}`);
                            }
                            throw new errors_1.ApiError(502, `${provider.name} answered unexpectedly: ${message}`);
                        }
                    }
                },
            },
        },
    };
}
//# sourceMappingURL=notifier.service.js.map