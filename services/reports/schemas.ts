/** Request schemas of the dashboard and report routes; each use case's input type is inferred from its schema. */
import { idSchema, isoDate, object, paginationProperties, type Infer } from '../../shared/http/schemas';

const format = {
  type: 'string',
  enum: ['json', 'csv'],
  description: 'csv: the same rows as CSV (or send Accept: text/csv)',
} as const;
const range = {
  from: { ...isoDate, description: 'first day (UTC), inclusive' },
  to: { ...isoDate, description: 'last day (UTC), inclusive' },
} as const;
const resellerId = {
  ...idSchema,
  description: "a reseller's tree; an admin may name any, a reseller one in its own tree",
} as const;

export const dashboardQuery = object({ reseller_id: resellerId });
export type DashboardInput = Infer<typeof dashboardQuery>;

export const REVENUE_GROUPS = ['day', 'week', 'month'] as const;
export const REVENUE_BY = ['method', 'plan', 'reseller', 'manager'] as const;
export const revenueQuery = object({
  ...range,
  ...paginationProperties,
  group: { type: 'string', enum: REVENUE_GROUPS, default: 'day' },
  by: { type: 'string', enum: REVENUE_BY, default: 'method' },
  reseller_id: resellerId,
  format,
});
export type RevenueInput = Infer<typeof revenueQuery>;

export const agingQuery = object({
  ...paginationProperties,
  by: { type: 'string', enum: ['subscriber', 'reseller'], default: 'subscriber' },
  reseller_id: resellerId,
  format,
});
export type AgingInput = Infer<typeof agingQuery>;

export const expiringQuery = object({ ...range, ...paginationProperties, reseller_id: resellerId, format });
export type ExpiringInput = Infer<typeof expiringQuery>;

export const usageQuery = object({ ...range, ...paginationProperties, reseller_id: resellerId, format });
export type UsageInput = Infer<typeof usageQuery>;

export const statementQuery = object({
  ...range,
  ...paginationProperties,
  reseller_id: { ...idSchema, description: 'the reseller; required for an admin, a reseller defaults to itself' },
  format,
});
export type StatementInput = Infer<typeof statementQuery>;

export const cardsReportQuery = object({ ...range, ...paginationProperties, reseller_id: resellerId, format });
export type CardsReportInput = Infer<typeof cardsReportQuery>;

export const reportNameParams = object({ name: { type: 'string', maxLength: 100 } }, ['name']);
