/**
 * The `ledger` service: GET /api/transactions (use-cases/list-transactions.ts). Its totals read
 * ledger_rollup, which the reports service folds.
 */
import type { ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { FAILURES } from '../../shared/failures';
import { wantsCsv, csvHeaders } from '../../shared/http/csv';
import type { Ctx } from '../../shared/http/context';
import { ledgerQuery, TAG, transactionRow, type LedgerInput } from './ledger-schemas';
import { exportTransactions, listTransactions } from './use-cases/list-transactions';

const schema: ServiceSchema<ServiceSettingSchema> = {
  name: 'ledger',
  actions: {
    list: {
      rest: 'GET /api/transactions',
      http: {
        auth: 'jwt',
        access: 'any authenticated (scope-filtered: an admin every row, a reseller its tree)',
        summary:
          'The ledger: every movement of money, newest first, with subscriber, reseller and manager names, and `totals` beside `data`: per currency, over every row the filter matches, `{ currency, count, incoming, outgoing, net }` (never summed across currencies). `?format=csv` or `Accept: text/csv` streams every match as CSV',
        tag: TAG,
        query: ledgerQuery,
        data: { type: 'array', items: transactionRow },
        csv: true,
        errors: {
          400: 'validation (the message names the field), or from after to',
          403: FAILURES.notAuthorized.message,
        },
      },
      async handler(ctx: Ctx<LedgerInput>) {
        if (!wantsCsv(ctx.params.format, ctx.meta.accept)) return listTransactions(ctx.meta.auth, ctx.params);
        const stream = await exportTransactions(ctx.meta.auth, ctx.params);
        ctx.meta.$responseHeaders = csvHeaders('transactions.csv');
        return stream;
      },
    },
  },
};

export const ledgerService = schema as ServiceSchema;
