/**
 * The owner's view (issue 38, docs/reports.md): GET /api/dashboard and GET /api/reports/:name, each
 * report its own route with its own query schema; a name no route serves is 404. Every route is
 * scoped like the lists (scope.ts) and every report also answers as CSV.
 */
import type { Service, ServiceSchema, ServiceSettingSchema } from 'moleculer';
import { fail } from '../../shared/failures';
import type { Ctx } from '../../shared/http/context';
import type { HttpRoute } from '../../shared/http/route';
import { foldLedgerRollup } from '../../shared/db/ledger-rollup';
import { foldNasOnline } from '../../shared/db/nas-online';
import { foldSessionHours } from '../../shared/db/session-hours';
import { foldSubscriberCounts } from '../../shared/db/subscriber-counts';
import {
  agingQuery,
  cardsReportQuery,
  dashboardQuery,
  expiringQuery,
  reportNameParams,
  revenueQuery,
  statementQuery,
  usageQuery,
  type AgingInput,
  type CardsReportInput,
  type DashboardInput,
  type ExpiringInput,
  type RevenueInput,
  type StatementInput,
  type UsageInput,
} from './schemas';
import { agingReport } from './use-cases/aging';
import { cardsReport } from './use-cases/cards';
import { dashboard } from './use-cases/dashboard';
import { expiringReport } from './use-cases/expiring';
import { resellerStatement } from './use-cases/reseller-statement';
import { revenueReport } from './use-cases/revenue';
import { usageReport } from './use-cases/usage';

const TAG = 'reports';
const FOLD_INTERVAL_MS = 10_000;
const ACCESS = "admin (every tree, or a reseller's with reseller_id), or a reseller over its tree";
const ERRORS = {
  400: 'Bad query: a field named, from after to, or a reseller_id that does not exist',
  403: "Not an admin or reseller, or a reseller_id outside the caller's tree",
};

const report = (summary: string, query: HttpRoute['query']): HttpRoute => ({
  auth: 'jwt',
  access: ACCESS,
  summary: `${summary}. JSON by default; ?format=csv or Accept: text/csv streams every row as CSV`,
  tag: TAG,
  query,
  csv: true,
  errors: ERRORS,
});

const money = { type: 'number' } as const;
const dashboardData = {
  type: 'object',
  properties: {
    currency: { type: 'string' },
    subscribers: {
      type: 'object',
      properties: Object.fromEntries(
        ['total', 'active', 'inactive', 'expired', 'expiring_7d', 'blocked', 'online'].map((k) => [
          k,
          { type: 'integer' },
        ]),
      ),
    },
    revenue: {
      type: 'object',
      properties: {
        today: money,
        month: money,
        last_month: money,
        by_method: { type: 'object', additionalProperties: money },
        wallet_topups: { type: 'object' },
        other_currencies: { type: 'array', items: { type: 'object' } },
      },
    },
    invoices: {
      type: 'object',
      properties: { outstanding: money, overdue: money, overdue_count: { type: 'integer' } },
    },
    wallets: { type: 'object', properties: { total: money } },
    cards: { type: 'object', properties: { sold: money, redeemed: money } },
    nas: { type: 'array', items: { type: 'object' } },
    series: { type: 'object' },
  },
} as const;

interface ReportsThis extends Service {
  foldTimer?: NodeJS.Timeout;
  /** The fold in progress, awaited at stop so no statement outlives the service. */
  folding?: Promise<void>;
  scheduleFold(): void;
}

const schema: ServiceSchema<ServiceSettingSchema, ReportsThis> = {
  name: 'reports',
  actions: {
    dashboard: {
      rest: 'GET /api/dashboard',
      http: {
        auth: 'jwt',
        access: ACCESS,
        summary:
          'Subscribers, revenue, invoices, wallets, cards, access servers and 30-day, 24-hour and 12-month series in one call',
        tag: TAG,
        query: dashboardQuery,
        data: dashboardData,
        errors: ERRORS,
      },
      handler: (ctx: Ctx<DashboardInput>) => dashboard(ctx.meta.auth, ctx.params),
    },
    revenue: {
      rest: 'GET /api/reports/revenue',
      http: report(
        'Payments per day, week or month, by method, plan, reseller or manager, with totals per currency',
        revenueQuery,
      ),
      handler: (ctx: Ctx<RevenueInput>) => revenueReport(ctx.meta.auth, ctx.params, ctx.meta),
    },
    aging: {
      rest: 'GET /api/reports/aging',
      http: report('Open balances per subscriber or reseller in buckets of days past due', agingQuery),
      handler: (ctx: Ctx<AgingInput>) => agingReport(ctx.meta.auth, ctx.params, ctx.meta),
    },
    expiring: {
      rest: 'GET /api/reports/expiring',
      http: report(
        'Subscribers expiring in the range, with auto-renew and whether the wallet covers the renewal',
        expiringQuery,
      ),
      handler: (ctx: Ctx<ExpiringInput>) => expiringReport(ctx.meta.auth, ctx.params, ctx.meta),
    },
    usage: {
      rest: 'GET /api/reports/usage',
      http: report('Top subscribers by bytes over the range, and totals per plan', usageQuery),
      handler: (ctx: Ctx<UsageInput>) => usageReport(ctx.meta.auth, ctx.params, ctx.meta),
    },
    resellerStatement: {
      rest: 'GET /api/reports/reseller-statement',
      http: report(
        "A reseller's opening balance, every movement with the balance after it, and closing balance (reseller_id required for an admin)",
        statementQuery,
      ),
      handler: (ctx: Ctx<StatementInput>) => resellerStatement(ctx.meta.auth, ctx.params, ctx.meta),
    },
    cards: {
      rest: 'GET /api/reports/cards',
      http: report('Per card batch: value sold, used and unused', cardsReportQuery),
      handler: (ctx: Ctx<CardsReportInput>) => cardsReport(ctx.meta.auth, ctx.params, ctx.meta),
    },
    unknown: {
      rest: 'GET /api/reports/:name',
      http: {
        auth: 'jwt',
        access: 'any authenticated manager',
        summary: 'A report name no route serves',
        tag: TAG,
        params: reportNameParams,
        errors: { 404: 'report not found' },
      },
      handler: () => {
        throw fail('reportNotFound');
      },
    },
  },

  methods: {
    /** Folds ledger_rollup, subscriber_counts, session_hours and nas_online every FOLD_INTERVAL_MS, one run at a time. */
    scheduleFold(this: ReportsThis) {
      this.foldTimer = setTimeout(() => {
        this.folding = Promise.all([foldLedgerRollup(), foldSubscriberCounts(), foldSessionHours(), foldNasOnline()])
          .then(
            () => undefined,
            (err: unknown) => this.logger.warn('folding the rollups failed', err),
          )
          .finally(() => {
            this.folding = undefined;
            if (this.foldTimer) this.scheduleFold();
          });
      }, FOLD_INTERVAL_MS);
      this.foldTimer.unref();
    },
  },

  async started(this: ReportsThis) {
    this.scheduleFold();
  },

  async stopped(this: ReportsThis) {
    clearTimeout(this.foldTimer);
    this.foldTimer = undefined;
    await this.folding;
  },
};

export const reportsService = schema as ServiceSchema;
