/** Routes served by the subscribers deployment unit: identity, resellers, plans, settings, subscribers. */
import type { RouteDef } from '../../shared/http/route';
import { emptyBody, idParams, idSchema, moneyAmount, currencyCode, object, paginationProperties } from '../../shared/http/schemas';
import { ROLES } from '../../shared/auth/claims';
import { settingsUpdateSchema } from '../../shared/settings';

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
];
