/**
 * The `ledger` service: GET /api/transactions (use-cases/list-transactions.ts), and the move of the
 * ledger totals' deltas into ledger_totals every second (ledger-query.ts), one run at a time.
 */
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { pgPool } from '../../shared/db/client';
import { FAILURES } from '../../shared/failures';
import { wantsCsv, csvHeaders } from '../../shared/http/csv';
import type { Ctx } from '../../shared/http/context';
import { FOLD_LEDGER_TOTALS } from './ledger-query';
import { ledgerQuery, TAG, transactionRow, type LedgerInput } from './ledger-schemas';
import { exportTransactions, listTransactions } from './use-cases/list-transactions';

const FOLD_INTERVAL_MS = 1_000;

interface LedgerThis extends Service {
  foldTimer?: NodeJS.Timeout;
  /** The move in progress, awaited at stop so no statement outlives the service. */
  folding?: Promise<void>;
  scheduleFold(): void;
}

export async function foldLedgerTotals(): Promise<number> {
  const res = await pgPool().query({ name: 'ledger_fold_totals', text: FOLD_LEDGER_TOTALS });
  return res.rowCount ?? 0;
}

const schema: ServiceSchema<ServiceSettingSchema, LedgerThis> = {
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

  methods: {
    scheduleFold(this: LedgerThis) {
      this.foldTimer = setTimeout(() => {
        this.folding = foldLedgerTotals()
          .then(
            () => undefined,
            (err: unknown) => this.logger.warn('moving ledger total deltas failed', err),
          )
          .finally(() => {
            this.folding = undefined;
            if (this.foldTimer) this.scheduleFold();
          });
      }, FOLD_INTERVAL_MS);
      this.foldTimer.unref();
    },
  },

  started(this: LedgerThis) {
    this.scheduleFold();
  },

  async stopped(this: LedgerThis) {
    clearTimeout(this.foldTimer);
    this.foldTimer = undefined;
    await this.folding;
  },
};

export const ledgerService = schema as ServiceSchema;
