/** Routes served by the subscribers deployment unit: identity, resellers, plans, settings, subscribers. */
import type { RouteDef } from '../../shared/http/route';
import { emptyBody, idParams, idSchema, moneyAmount, currencyCode, object, paginationProperties } from '../../shared/http/schemas';
import { ROLES } from '../../shared/auth/claims';
import { settingsUpdateSchema } from '../../shared/settings';
import {
  addBalanceBody, addDaysBody, bulkBody, changePriceQuery, changeServiceBody, createBody, listQuery, renameBody,
  ruleCreateBody, ruleDeleteBody, ruleParams, ruleUpdateBody, topupBody, updateBody,
} from './subscriber-schemas';

const ADMIN = 'admin';
const adminErrors = { 403: 'Not an admin' };

const permissionList = { type: 'array', items: { type: 'string', pattern: '^[a-z_]+\\.[a-z_]+$' }, maxItems: 100 };
const rateLimitText = { type: 'string', pattern: '^\\d+[kKmMgG]?(/\\d+[kKmMgG]?)?( .*)?$', maxLength: 200 };
const fupTier = object(
  {
    level: { type: 'integer', minimum: 1, maximum: 3 },
    threshold_gb: { type: 'number', minimum: 0, maximum: 10000 },
    rate_limit: rateLimitText,
  },
  ['level', 'threshold_gb', 'rate_limit'],
);
const quotaGb = { type: ['number', 'null'], minimum: 0, maximum: 10000 };

const planFields = {
  name: { type: 'string', minLength: 1, maxLength: 100 },
  price: moneyAmount,
  duration_days: { type: 'integer', minimum: 1, maximum: 3660 },
  currency: currencyCode,
  daily_quota_gb: quotaGb,
  monthly_quota_gb: quotaGb,
  rate_limit: { ...rateLimitText, type: ['string', 'null'] },
  pool_name: { type: ['string', 'null'], maxLength: 64, pattern: '^[A-Za-z0-9_.-]*$' },
  mac_binding: { type: 'boolean' },
  fup_tiers: { type: 'array', items: fupTier, maxItems: 3 },
};

const resellerFields = {
  name: { type: 'string', minLength: 1, maxLength: 200 },
  commission_rate: { type: 'number', minimum: 0, maximum: 100 },
  currency: currencyCode,
};

const managerFields = {
  username: { type: 'string', minLength: 3, maxLength: 64, pattern: '^[A-Za-z0-9_.@-]+$' },
  password: { type: 'string', minLength: 8, maxLength: 200 },
  role: { type: 'string', enum: [...ROLES] },
  reseller_id: { type: ['integer', 'null'], minimum: 1 },
  permissions: permissionList,
};

export const routes: RouteDef[] = [
  // ---- identity
  {
    method: 'POST', path: '/api/auth/login', action: 'auth.login', auth: 'public', access: 'none',
    summary: 'Exchange manager credentials for a JWT', tag: 'auth',
    body: object({ username: { type: 'string', minLength: 1, maxLength: 200 }, password: { type: 'string', minLength: 1, maxLength: 200 } }, ['username', 'password']),
    errors: { 401: 'Wrong username or password' },
  },
  {
    method: 'POST', path: '/api/auth/logout', action: 'auth.logout', auth: 'jwt', access: 'any authenticated',
    summary: 'Revoke the calling token (its jti is blacklisted)', tag: 'auth', body: emptyBody,
  },
  // ---- managers
  {
    method: 'POST', path: '/api/managers', action: 'managers.create', auth: 'jwt', access: ADMIN,
    summary: 'Create a manager (admin, reseller or user account)', tag: 'managers', success: 201,
    body: object(managerFields, ['username', 'password', 'role']),
    errors: { ...adminErrors, 409: 'username already exists' },
  },
  {
    method: 'GET', path: '/api/managers', action: 'managers.list', auth: 'jwt', access: ADMIN,
    summary: 'List managers', tag: 'managers', query: object(paginationProperties), errors: adminErrors,
  },
  {
    method: 'PUT', path: '/api/managers/:id', action: 'managers.update', auth: 'jwt', access: ADMIN,
    summary: 'Update a manager', tag: 'managers', params: idParams(),
    body: { ...object(managerFields), minProperties: 1 },
    errors: { ...adminErrors, 404: 'manager not found', 409: 'username already exists, or cannot demote the last admin' },
  },
  {
    method: 'DELETE', path: '/api/managers/:id', action: 'managers.remove', auth: 'jwt', access: ADMIN,
    summary: 'Delete a manager', tag: 'managers', params: idParams(),
    errors: { ...adminErrors, 404: 'manager not found', 409: 'cannot delete the last admin' },
  },
  // ---- resellers
  {
    method: 'POST', path: '/api/resellers', action: 'resellers.create', auth: 'jwt', access: 'admin, or a reseller inside its own tree',
    summary: 'Create a reseller (a reseller creates sub-resellers under itself)', tag: 'resellers', success: 201,
    body: object({ ...resellerFields, parent_id: { type: ['integer', 'null'], minimum: 1 }, balance: moneyAmount }, ['name']),
    errors: { 403: 'Parent outside the caller\'s tree, or a reseller setting an opening balance' },
  },
  {
    method: 'GET', path: '/api/resellers', action: 'resellers.list', auth: 'jwt', access: 'admin, or a reseller (its own tree)',
    summary: 'List resellers in scope', tag: 'resellers', query: object({ ...paginationProperties, parent_id: idSchema }),
  },
  {
    method: 'GET', path: '/api/resellers/:id', action: 'resellers.get', auth: 'jwt', access: 'admin, or a reseller (its own tree)',
    summary: 'One reseller', tag: 'resellers', params: idParams(), errors: { 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
  },
  {
    method: 'PUT', path: '/api/resellers/:id', action: 'resellers.update', auth: 'jwt', access: 'admin, or an ancestor reseller',
    summary: 'Update name, commission rate or currency', tag: 'resellers', params: idParams(),
    body: { ...object(resellerFields), minProperties: 1 },
    errors: { 403: 'Outside the caller\'s tree, or a reseller editing itself', 404: 'reseller not found' },
  },
  {
    method: 'POST', path: '/api/resellers/:id/balance', action: 'resellers.adjustBalance', auth: 'jwt', access: 'admin (credit or debit), or an ancestor reseller (transfer from its own balance)',
    summary: 'Credit (positive) or debit (negative) a reseller balance through the ledger', tag: 'resellers', params: idParams(),
    body: object({ amount: { type: 'number', minimum: -1e12, maximum: 1e12 }, notes: { type: 'string', maxLength: 1000 } }, ['amount']),
    errors: { 402: 'Insufficient balance (debit below zero, or a transfer the caller cannot fund)', 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
  },
  {
    method: 'POST', path: '/api/resellers/:id/service-limits', action: 'resellers.setServiceLimit', auth: 'jwt', access: 'admin, or an ancestor reseller for plans it holds itself',
    summary: 'Allow a plan for a reseller, optionally capping its subscribers on it', tag: 'resellers', params: idParams(),
    body: object({ service_id: idSchema, max_subscribers: { type: ['integer', 'null'], minimum: 0, maximum: 10000000 } }, ['service_id']),
    errors: { 400: 'service_id not found', 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
  },
  {
    method: 'GET', path: '/api/resellers/:id/service-limits', action: 'resellers.listServiceLimits', auth: 'jwt', access: 'admin, or a reseller (its own tree)',
    summary: 'Plans allowed for a reseller', tag: 'resellers', params: idParams(), errors: { 403: 'Outside the caller\'s tree', 404: 'reseller not found' },
  },
  // ---- plans
  {
    method: 'POST', path: '/api/services', action: 'plans.create', auth: 'jwt', access: ADMIN,
    summary: 'Create a plan', tag: 'plans', success: 201,
    body: object(planFields, ['name', 'price', 'duration_days']), errors: { ...adminErrors, 409: 'service name already exists' },
  },
  {
    method: 'GET', path: '/api/services', action: 'plans.list', auth: 'jwt', access: 'any authenticated',
    summary: 'List plans', tag: 'plans', query: object(paginationProperties),
  },
  {
    method: 'GET', path: '/api/services/:id', action: 'plans.get', auth: 'jwt', access: 'any authenticated',
    summary: 'One plan', tag: 'plans', params: idParams(), errors: { 404: 'service not found' },
  },
  {
    method: 'PUT', path: '/api/services/:id', action: 'plans.update', auth: 'jwt', access: ADMIN,
    summary: 'Update a plan', tag: 'plans', params: idParams(), body: { ...object(planFields), minProperties: 1 },
    errors: { ...adminErrors, 404: 'service not found', 409: 'service name already exists' },
  },
  {
    method: 'DELETE', path: '/api/services/:id', action: 'plans.remove', auth: 'jwt', access: ADMIN,
    summary: 'Retire a plan (soft delete; refused while subscribers use it)', tag: 'plans', params: idParams(),
    errors: { ...adminErrors, 404: 'service not found', 409: 'service is in use by subscribers' },
  },
  // ---- settings
  {
    method: 'GET', path: '/api/settings', action: 'settings.get', auth: 'jwt', access: ADMIN,
    summary: 'All system settings (secrets masked)', tag: 'settings', errors: adminErrors,
  },
  {
    method: 'PUT', path: '/api/settings', action: 'settings.update', auth: 'jwt', access: ADMIN,
    summary: 'Change any subset of the settings; unknown keys or wrong types are 400', tag: 'settings',
    body: settingsUpdateSchema, errors: adminErrors,
  },
  // ---- subscribers (literal paths before `/:id` ones: the gateway matches in order)
  {
    method: 'POST', path: '/api/subscribers/bulk-action', action: 'subscriberBulk.run', auth: 'jwt',
    access: 'admin or reseller; each action also needs its own subscribers.* permission, checked per id',
    summary: 'Apply one action to many subscribers; per-id failures in data.failed; 202 { job_id } when not done within BULK_SYNC_SECONDS (25)',
    tag: 'subscribers', body: bulkBody, errors: { 403: 'Not an admin or reseller' },
  },
  {
    method: 'GET', path: '/api/subscribers/bulk-jobs/:id', action: 'subscriberBulk.job', auth: 'jwt', access: 'admin, or the manager who started the job',
    summary: 'Progress and outcome of a bulk job', tag: 'subscribers', params: idParams(), errors: { 403: 'Another manager\'s job', 404: 'bulk job not found' },
  },
  {
    method: 'GET', path: '/api/subscribers', action: 'subscribers.list', auth: 'jwt', access: 'subscribers.view',
    summary: 'List subscribers in scope with filters, search and sort', tag: 'subscribers', query: listQuery,
    errors: { 403: 'Permission denied, or reseller_id outside the caller\'s tree' },
  },
  {
    method: 'POST', path: '/api/subscribers', action: 'subscribers.create', auth: 'jwt', access: 'subscribers.create',
    summary: 'Create a subscriber with its FreeRADIUS rows', tag: 'subscribers', success: 201, body: createBody,
    errors: { 400: 'service_id not found, or a field is invalid', 403: 'reseller has no service limit for this plan', 409: 'username already exists, or static_ip already used' },
  },
  {
    method: 'GET', path: '/api/subscribers/:id', action: 'subscribers.get', auth: 'jwt', access: 'subscribers.view',
    summary: 'One subscriber with service, reseller, counters, password and daily_breakdown', tag: 'subscribers', params: idParams(),
    errors: { 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'PUT', path: '/api/subscribers/:id', action: 'subscribers.update', auth: 'jwt', access: 'subscribers.edit (username change: subscribers.rename; reseller_id: subscribers.transfer)',
    summary: 'Update any subset of the create fields; unknown fields are dropped', tag: 'subscribers', params: idParams(), body: updateBody,
    errors: { 400: 'service_id not found, or a field is invalid', 403: 'not authorized', 404: 'subscriber not found', 409: 'username already exists, or static_ip already used' },
  },
  {
    method: 'DELETE', path: '/api/subscribers/:id', action: 'subscribers.remove', auth: 'jwt', access: 'subscribers.delete',
    summary: 'Soft delete: the username becomes reusable and the FreeRADIUS rows are removed', tag: 'subscribers', params: idParams(),
    errors: { 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'DELETE', path: '/api/subscribers/:id/permanent', action: 'subscribers.removePermanently', auth: 'jwt', access: 'admin',
    summary: 'Hard delete: everything but the ledger, invoices and accounting history', tag: 'subscribers', params: idParams(),
    errors: { 403: 'Not an admin', 404: 'subscriber not found' },
  },
  ...([
    ['renew', 'renew', 'subscribers.renew', 'Charge the reseller, extend expiry by the plan duration, reset counters, create the renewal invoice, reconnect', { 402: 'insufficient reseller balance', 409: 'already renewed today' }],
    ['reset-fup', 'resetFup', 'subscribers.reset_fup', 'Daily quota counter and FUP tier to 0 (monthly untouched)', {}],
    ['reset-mac', 'resetMac', 'subscribers.reset_mac', 'Clear the bound MAC so the next connection rebinds', {}],
    ['activate', 'activate', 'subscribers.inactivate', 'Status active', {}],
    ['deactivate', 'deactivate', 'subscribers.inactivate', 'Status inactive; FreeRADIUS refuses it; disconnect queued', {}],
    ['refill', 'refill', 'subscribers.refill_quota', 'Reset daily and monthly counters; charge the refill fee to the reseller', { 402: 'insufficient reseller balance' }],
  ] as const).map(([path, action, permission, summary, errors]): RouteDef => ({
    method: 'POST', path: `/api/subscribers/:id/${path}`, action: `subscribers.${action}`, auth: 'jwt', access: permission,
    summary, tag: 'subscribers', params: idParams(), body: emptyBody,
    errors: { 403: 'not authorized', 404: 'subscriber not found', ...errors },
  })),
  {
    method: 'POST', path: '/api/subscribers/:id/rename', action: 'subscribers.rename', auth: 'jwt', access: 'subscribers.rename',
    summary: 'Change the username everywhere it is stored; charges the rename fee to the reseller', tag: 'subscribers', params: idParams(), body: renameBody,
    errors: { 400: 'new_username is invalid', 402: 'insufficient reseller balance', 403: 'not authorized', 404: 'subscriber not found', 409: 'username already exists' },
  },
  {
    method: 'POST', path: '/api/subscribers/:id/add-days', action: 'subscribers.addDays', auth: 'jwt', access: 'subscribers.add_days',
    summary: 'Extend expiry_date without a payment (audited with the reason)', tag: 'subscribers', params: idParams(), body: addDaysBody,
    errors: { 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'POST', path: '/api/subscribers/:id/change-service', action: 'subscribers.changeService', auth: 'jwt', access: 'subscribers.change_service',
    summary: 'Move to another plan; with charge_difference, invoice the prorated net due or credit the wallet', tag: 'subscribers', params: idParams(), body: changeServiceBody,
    errors: { 400: 'service_id not found', 403: 'not authorized, or reseller has no service limit for this plan', 404: 'subscriber not found' },
  },
  {
    method: 'GET', path: '/api/subscribers/:id/calculate-change-service-price', action: 'subscribers.changeServicePrice', auth: 'jwt', access: 'subscribers.change_service',
    summary: 'Prorated price of a plan change, without committing', tag: 'subscribers', params: idParams(), query: changePriceQuery,
    errors: { 400: 'service_id not found', 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'POST', path: '/api/subscribers/:id/topup-data', action: 'subscribers.topupData', auth: 'jwt', access: 'subscribers.refill_quota',
    summary: 'Add extra GB on top of the monthly FUP quota', tag: 'subscribers', params: idParams(), body: topupBody,
    errors: { 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'POST', path: '/api/subscribers/:id/add-balance', action: 'subscribers.addBalance', auth: 'jwt', access: 'subscribers.refill_quota',
    summary: 'Credit the subscriber\'s prepaid wallet', tag: 'subscribers', params: idParams(), body: addBalanceBody,
    errors: { 400: 'amount has too many decimals', 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'GET', path: '/api/subscribers/:id/bandwidth-rules', action: 'bandwidthRules.list', auth: 'jwt', access: 'subscribers.view',
    summary: 'The subscriber\'s bandwidth-rule overrides', tag: 'subscribers', params: idParams(), errors: { 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'POST', path: '/api/subscribers/:id/bandwidth-rules', action: 'bandwidthRules.create', auth: 'jwt', access: 'subscribers.edit',
    summary: 'Add a bandwidth rule (direction, rate_kbps, optional time window and days, priority)', tag: 'subscribers', success: 201,
    params: idParams(), body: ruleCreateBody, errors: { 403: 'not authorized', 404: 'subscriber not found' },
  },
  {
    method: 'PUT', path: '/api/subscribers/:id/bandwidth-rules', action: 'bandwidthRules.update', auth: 'jwt', access: 'subscribers.edit',
    summary: 'Update the rule named by rule_id in the body', tag: 'subscribers', params: idParams(), body: ruleUpdateBody,
    errors: { 403: 'not authorized', 404: 'subscriber not found, or bandwidth rule not found' },
  },
  {
    method: 'DELETE', path: '/api/subscribers/:id/bandwidth-rules', action: 'bandwidthRules.remove', auth: 'jwt', access: 'subscribers.edit',
    summary: 'Delete the rule named by rule_id in the body', tag: 'subscribers', params: idParams(), body: ruleDeleteBody,
    errors: { 403: 'not authorized', 404: 'subscriber not found, or bandwidth rule not found' },
  },
  {
    method: 'PUT', path: '/api/subscribers/:id/bandwidth-rules/:rule_id', action: 'bandwidthRules.update', auth: 'jwt', access: 'subscribers.edit',
    summary: 'Update one rule (rule id in the path)', tag: 'subscribers', params: ruleParams, body: { ...ruleUpdateBody, required: [], minProperties: 1 },
    errors: { 403: 'not authorized', 404: 'subscriber not found, or bandwidth rule not found' },
  },
  {
    method: 'DELETE', path: '/api/subscribers/:id/bandwidth-rules/:rule_id', action: 'bandwidthRules.remove', auth: 'jwt', access: 'subscribers.edit',
    summary: 'Delete one rule (rule id in the path)', tag: 'subscribers', params: ruleParams,
    errors: { 403: 'not authorized', 404: 'subscriber not found, or bandwidth rule not found' },
  },
];
