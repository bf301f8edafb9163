/**
 * Every failure the API answers with, by name: its HTTP status and its message (the spec's words
 * where the spec gives them). Code names a failure (`throw fail('invoiceNotFound')`) and never
 * writes a status or a message itself, so one reason reads the same wherever it arises. A message
 * that carries a detail (a field, a currency) is a function of it; `fail` takes its arguments.
 */
import { ApiError } from './errors';
import { PAPER_NAMES } from './paper';

type Message = string | ((...args: never[]) => string);

export const FAILURES = {
  // 400: the request, or a record it names, is not acceptable.
  invalidRequest: { status: 400, message: (why: string) => why },
  bodyNotObject: { status: 400, message: 'body must be a JSON object' },
  bodyEmpty: { status: 400, message: 'body has nothing to change' },
  duplicateKey: { status: 400, message: (key: string) => `body has the key "${key}" more than once` },
  notPlainDigits: {
    status: 400,
    message: (field: string, integer: boolean) =>
      `${field} must be ${integer ? 'an integer' : 'a number'} in plain decimal digits`,
  },
  controlCharacters: {
    status: 400,
    message: (field: string) => `${field || 'value'} must not contain control characters`,
  },
  controlCharactersInKey: {
    status: 400,
    message: (field: string) => `${field || 'body'} has a field name with control characters`,
  },
  /** A body or query field names a record that does not exist (400: the route's own record may well exist). */
  referenceNotFound: { status: 400, message: (field: string) => `${field} not found` },
  tooManyDecimals: {
    status: 400,
    message: (field: string, currency: string) => `${field} has more decimal places than ${currency} allows`,
  },
  currencyInvalid: { status: 400, message: 'currency must be an ISO 4217 code' },
  gardenAttributesInvalid: { status: 400, message: (why: string) => `walled_garden_attributes: ${why}` },
  vendorGardenInvalid: { status: 400, message: (why: string) => `walled_garden_vendor_attributes: ${why}` },
  vendorAttributesInvalid: { status: 400, message: (why: string) => `vendor_attributes: ${why}` },
  currencyChangeNeedsZeroBalance: { status: 400, message: 'currency can change only while the balance is 0' },
  planCurrencyNeedsPrice: { status: 400, message: 'price is required when currency changes' },
  currencyChangeNeedsEmptyWallets: {
    status: 409,
    message: (currency: string) =>
      `wallets hold money in ${currency}: the currency can change only while every wallet is 0`,
  },
  planCurrencyOwnPrices: {
    status: 409,
    message: (currency: string) =>
      `subscribers on this plan have their own price in ${currency}: change or clear those prices first`,
  },
  transferCurrencyMismatch: { status: 400, message: 'a transfer needs both resellers in the same currency' },
  amountZero: { status: 400, message: 'amount must not be 0' },
  amountNotPositive: { status: 400, message: 'amount must be greater than 0' },
  amountExceedsBalance: { status: 400, message: 'amount exceeds balance' },
  amountExceedsWallet: { status: 400, message: 'amount exceeds wallet balance' },
  walletCurrencyMismatch: {
    status: 400,
    message: (wallet: string, invoice: string) => `the wallet holds ${wallet}; this invoice is in ${invoice}`,
  },
  walletCreditCurrency: {
    status: 409,
    message: (wallet: string, credit: string) =>
      `the system currency changed to ${wallet} meanwhile; this credit was in ${credit}`,
  },
  serviceChangeRefundCurrency: {
    status: 409,
    message: (refund: string, wallet: string) =>
      `the plan change refunds ${refund}, but the wallet holds ${wallet}: change it without charge_difference`,
  },
  ownPriceCurrency: {
    status: 409,
    message: (current: string, next: string) =>
      `the subscriber's own price is in ${current}: clear or change it to move to a plan in ${next}`,
  },
  planCurrencyMismatch: {
    status: 400,
    message: (field: string, next: string, current: string) =>
      `${field} is priced in ${next} but the current plan in ${current}`,
  },
  noCurrentPlan: { status: 400, message: 'the subscriber has no current plan to prorate' },
  fupLevelsNotDistinct: { status: 400, message: 'fup_tiers levels must be distinct' },
  usernameInvalid: {
    status: 400,
    message: (field: string) => `${field} must be name or name@realm (letters, digits and . _ -)`,
  },
  newUsernameInvalid: { status: 400, message: 'new_username is invalid' },
  newUsernameNotValid: { status: 400, message: 'new_username is not a valid username' },
  notInRealm: { status: 400, message: (realm: string) => `username is not in realm ${realm}` },
  macInvalid: { status: 400, message: 'mac_address must be a MAC address such as AA:BB:CC:DD:EE:FF' },
  staticIpInvalid: { status: 400, message: 'static_ip must be an IPv4 address' },
  ipv6PrefixInvalid: {
    status: 400,
    message: (field: string, range: string) =>
      `${field} must be an IPv6 prefix such as 2001:db8:1::/${range.split('-')[0]} (length ${range}, host bits zero)`,
  },
  ipv6PoolInvalid: { status: 400, message: (why: string) => why },
  ipv6PoolLengthUnfit: {
    status: 400,
    message: (pool: string, length: number | string, field: string, column: string, range: string) =>
      `${field}: IPv6 pool ${pool} hands out /${length} prefixes; ${column} takes /${range}`,
  },
  ipv6PoolLengthUnfitForPlan: {
    status: 400,
    message: (length: number | string, plan: string, field: string, column: string, range: string) =>
      `prefix_length /${length} does not fit plan ${plan}'s ${field}: ${column} takes /${range}`,
  },
  ipv6PoolBothKinds: {
    status: 400,
    message: (pool: string) =>
      `delegated_ipv6_pool must name another pool than framed_ipv6_pool: IPv6 pool ${pool} gives a subscriber one prefix`,
  },
  startTimeMissing: { status: 400, message: 'start_time is required with end_time' },
  endTimeMissing: { status: 400, message: 'end_time is required with start_time' },
  timesEqual: { status: 400, message: 'end_time must differ from start_time' },
  resellerRequiredForRole: { status: 400, message: 'reseller_id is required for role reseller' },
  resellerForbiddenForAdmin: { status: 400, message: 'reseller_id must be empty for role admin' },
  unknownPermission: { status: 400, message: (name: string) => `unknown permission ${name}` },
  phoneMissing: { status: 400, message: 'phone is required: the subscriber has no phone number' },
  recipientInvalid: { status: 400, message: (why: string) => why },
  idempotencyKeyTooLong: { status: 400, message: (max: number) => `Idempotency-Key must be at most ${max} characters` },
  todayInvalid: { status: 400, message: 'today must be a date (YYYY-MM-DD)' },
  htmlMissing: { status: 400, message: 'html is required' },
  paperInvalid: { status: 400, message: `paper must be one of ${PAPER_NAMES.join(', ')}` },
  taxRateDecimals: { status: 400, message: 'tax_rate must have at most 2 decimal places' },
  taxRateRange: { status: 400, message: 'tax_rate must be between 0 and 100' },
  itemsEmpty: { status: 400, message: 'items must not be empty' },
  itemQtyDecimals: { status: 400, message: (i: number) => `items[${i}].qty must have at most 3 decimal places` },
  itemQtyNotPositive: { status: 400, message: (i: number) => `items[${i}].qty must be greater than 0` },
  itemPriceNegative: { status: 400, message: (i: number) => `items[${i}].unit_price must not be negative` },
  itemsTotalTooLarge: { status: 400, message: 'items total is too large' },
  dueBeforeIssue: { status: 400, message: 'due_date must not be before the issue date' },
  malformedJson: { status: 400, message: 'malformed JSON body' },
  bodyTooDeep: { status: 400, message: (max: number) => `JSON body nests deeper than ${max} levels` },
  targetNotAllowed: { status: 400, message: (field: string, why: string) => `${field} refused: ${why}` },
  secretRequired: {
    status: 400,
    message: (secret: string, url: string) => `${secret} must be given again in the same request when ${url} changes`,
  },
  keyPermissionNotHeld: {
    status: 400,
    message: (permission: string) => `the key's manager does not hold ${permission}`,
  },
  allowedIpInvalid: { status: 400, message: (i: number) => `allowed_ips[${i}] must be an IP address or CIDR block` },
  expiryInPast: { status: 400, message: 'expires_at must be in the future' },
  logoNotImage: { status: 400, message: 'operator_logo_url must be a PNG, JPEG, GIF or WebP image' },

  // 401: no valid identity.
  unauthorized: { status: 401, message: 'unauthorized' },
  bearerMissing: { status: 401, message: 'missing bearer token' },
  tokenExpired: { status: 401, message: 'token expired' },
  tokenInvalid: { status: 401, message: 'invalid token' },
  tokenRevoked: { status: 401, message: 'token revoked' },
  managerGone: { status: 401, message: 'manager no longer exists' },
  managerDisabled: { status: 401, message: 'manager is disabled' },
  apiKeyRevoked: { status: 401, message: 'api key revoked' },
  apiKeyExpired: { status: 401, message: 'api key expired' },
  badCredentials: { status: 401, message: 'invalid username or password' },

  // 402
  insufficientBalance: { status: 402, message: 'insufficient reseller balance' },

  // 403: known caller, not allowed.
  notAuthorized: { status: 403, message: 'not authorized' },
  apiKeyAddress: { status: 403, message: 'this api key is not allowed from this address' },
  keyCannotManageKeys: { status: 403, message: 'an api key cannot manage api keys' },
  keyCannotChangeTwoFactor: { status: 403, message: 'an api key cannot change two-factor sign-in' },
  keyCannotGrantAdmin: {
    status: 403,
    message: "an api key cannot create or promote an admin or set an admin's password",
  },
  keyCannotSignOut: { status: 403, message: 'an api key cannot sign out' },
  outOfScope: { status: 403, message: 'out of scope' },
  permissionRequired: { status: 403, message: (permission: string) => `permission ${permission} required` },
  roleRequired: { status: 403, message: (roles: string) => `requires role ${roles}` },
  resellerRequiredForCaller: { status: 403, message: 'reseller_id is required for a caller without a reseller' },
  tokenResellerGone: { status: 403, message: 'reseller of this token no longer exists' },
  ownAccount: { status: 403, message: 'a reseller cannot change its own account' },
  openingBalanceAdminOnly: {
    status: 403,
    message: 'only an admin can give an opening balance; transfer with POST /api/resellers/:id/balance',
  },
  planNotHeld: { status: 403, message: 'a reseller can pass on only plans it holds itself' },
  noServiceLimit: { status: 403, message: 'reseller has no service limit for this plan' },
  serviceLimitReached: { status: 403, message: 'reseller service limit reached for this plan' },

  // 404
  notFound: { status: 404, message: 'not found' },
  invoiceNotFound: { status: 404, message: 'invoice not found' },
  subscriberNotFound: { status: 404, message: 'subscriber not found' },
  serviceNotFound: { status: 404, message: 'service not found' },
  resellerNotFound: { status: 404, message: 'reseller not found' },
  ipv6PoolNotFound: { status: 404, message: 'IPv6 pool not found' },
  managerNotFound: { status: 404, message: 'manager not found' },
  apiKeyNotFound: { status: 404, message: 'api key not found' },
  nasNotFound: { status: 404, message: 'nas not found' },
  bandwidthRuleNotFound: { status: 404, message: 'bandwidth rule not found' },
  bulkJobNotFound: { status: 404, message: 'bulk job not found' },
  consoleFileNotFound: { status: 404, message: 'no such console file' },

  // 409: the records' state forbids it.
  usernameTaken: { status: 409, message: 'username already exists' },
  serviceNameTaken: { status: 409, message: 'service name already exists' },
  nasIpTaken: { status: 409, message: 'nas ip_address already exists' },
  staticIpUsed: { status: 409, message: 'static_ip already used' },
  poolExhausted: { status: 409, message: 'pool has no free address' },
  ipv6PrefixUsed: {
    status: 409,
    message: (field: string, held: string) => `${field} overlaps ${held}, already used by another subscriber`,
  },
  ipv6PoolExhausted: { status: 409, message: (pool: string) => `IPv6 pool ${pool} has no free prefix` },
  ipv6PoolTaken: { status: 409, message: (pool: string) => `IPv6 pool ${pool} already exists or overlaps another` },
  ipv6PoolInUse: { status: 409, message: (pool: string) => `IPv6 pool ${pool} has assigned prefixes` },
  ipv6PoolHeldForOtherField: {
    status: 409,
    message: (pool: string, field: string) => `IPv6 pool ${pool} already gives this subscriber its ${field}`,
  },
  ipv6PoolNamedForBoth: {
    status: 409,
    message: (plan: string, pool: string) =>
      `plan ${plan} names IPv6 pool ${pool} as both framed_ipv6_pool and delegated_ipv6_pool`,
  },
  renewedToday: { status: 409, message: 'already renewed today' },
  /** An online renewal payment's renewal tried again (payments' sweep) once made. */
  renewedForPayment: { status: 409, message: "this payment's renewal is already made" },
  resellerCurrencyMismatch: { status: 409, message: (currency: string) => `reseller balance is not in ${currency}` },
  serviceInUse: { status: 409, message: 'service is in use by subscribers' },
  lastAdminDemote: { status: 409, message: 'cannot demote the last admin' },
  lastAdminDisable: { status: 409, message: 'cannot disable the last admin' },
  lastAdminDelete: { status: 409, message: 'cannot delete the last admin' },
  invoiceVoid: { status: 409, message: 'invoice is void' },
  invoiceNotEditable: {
    status: 409,
    message: (status: string) => `cannot edit a ${status} invoice; only pending invoices can be edited`,
  },
  invoicePaid: { status: 409, message: 'cannot delete paid invoice' },
  invoiceHasPayments: { status: 409, message: 'cannot delete an invoice with payments' },
  voidHasPayments: { status: 409, message: 'invoice has payments: void is for an invoice nobody paid' },
  consolidationNeedsTwo: { status: 409, message: 'at least two pending invoices are needed to consolidate' },
  consolidationCurrencies: { status: 409, message: 'pending invoices are in different currencies' },
  consolidationTaxRates: { status: 409, message: 'pending invoices have different tax rates' },
  consolidationResellers: { status: 409, message: 'pending invoices are billed to different resellers' },
  noOpenInvoice: { status: 409, message: 'the subscriber has no open invoice to combine' },
  idempotencyKeyReused: { status: 409, message: 'Idempotency-Key was already used with a different request' },
  subscriberOffline: { status: 409, message: 'subscriber is offline' },
  nasNotRegistered: { status: 409, message: (ip: string) => `access server ${ip} is not registered` },
  nasWithoutApi: { status: 409, message: (name: string) => `access server ${name} has no API credentials` },
  sessionWithoutAddress: {
    status: 409,
    message:
      'the live session has no address to ping (accounting has neither Framed-IP-Address nor Framed-IPv6-Address)',
  },
  messagingNotConfigured: { status: 409, message: (why: string) => `no messaging account configured (${why})` },

  // 422: accepted, but nothing to do (spec section 7).
  /** A bulk renew whose every id was already renewed today; the single renew answers 409 renewedToday. */
  renewNoOp: { status: 422, message: 'already renewed today' },

  // 413, 415, 429
  requestTooLarge: { status: 413, message: 'request body too large (limit 1 MB)' },
  documentTooLarge: { status: 413, message: (limit: number) => `document larger than ${limit} bytes` },
  notJson: { status: 415, message: 'content type must be application/json' },
  tooManyRequests: { status: 429, message: 'too many requests' },
  loginLocked: { status: 429, message: 'too many failed sign-ins; try again later' },

  // Prepaid cards and online payments (docs/cards.md, docs/payments.md).
  cardKindInvalid: { status: 400, message: 'give exactly one of value and service_id' },
  cardNotFound: { status: 404, message: 'card not found' },
  cardBatchNotFound: { status: 404, message: 'card batch not found' },
  reportNotFound: { status: 404, message: 'report not found' },
  cardPinInvalid: { status: 400, message: 'invalid PIN' },
  cardUsed: { status: 409, message: 'card already used' },
  cardSuspended: { status: 409, message: 'card is suspended' },
  cardExpired: { status: 409, message: 'card has expired' },
  cardPlanCurrency: {
    status: 409,
    message: (plan: string, card: string) => `the card's plan is now priced in ${plan}; the card was issued in ${card}`,
  },
  cardOtherTree: { status: 403, message: "card belongs to another reseller's tree" },
  cardSheetPrinted: {
    status: 409,
    message: (cards: string) => `the PINs were shown once already: cards ${cards} were printed`,
  },
  redeemLocked: { status: 429, message: 'too many failed card attempts; a manager can lift the lockout' },
  paymentsNotConfigured: { status: 409, message: 'online payment is not configured' },
  nothingToPay: { status: 409, message: 'nothing to pay' },
  unknownPaymentProvider: { status: 404, message: 'unknown payment provider' },
  webhookSignatureInvalid: { status: 400, message: 'webhook signature missing or invalid' },
  checkoutNotFound: { status: 404, message: 'checkout not found' },
  /** An event for a checkout whose provider session is not stored yet: the provider delivers it again. */
  checkoutPending: { status: 503, message: 'checkout not ready; retry shortly' },
  // Outgoing webhooks (docs/webhooks.md).
  webhookNotFound: { status: 404, message: 'webhook not found' },
  webhookDeliveryNotFound: { status: 404, message: 'webhook delivery not found' },

  // Two-factor sign-in (docs/two-factor.md).
  twoFactorChallengeInvalid: { status: 401, message: 'two-factor challenge expired or invalid; sign in again' },
  /** The second step of a sign-in (401, like a wrong password). */
  twoFactorCodeRejected: { status: 401, message: 'invalid two-factor code' },
  /** A code given to enrol, disable or renew recovery codes: the caller stays signed in. */
  twoFactorCodeWrong: { status: 400, message: 'code is not a valid two-factor code' },
  twoFactorCodeRequired: { status: 400, message: 'code is required to change your own two-factor sign-in' },
  /** A step that grants admin sign-in or another manager's second factor, by a caller with two-factor on. */
  freshCodeRequired: {
    status: 400,
    message: (field: string) => `${field} is required: this step needs a current code of your own two-factor sign-in`,
  },
  twoFactorEnrolmentRequired: {
    status: 403,
    message: 'two-factor sign-in must be set up first (POST /api/auth/two-factor/enrol)',
  },
  twoFactorAlreadyEnabled: { status: 409, message: 'two-factor sign-in is already enabled; disable it first' },
  twoFactorNotStarted: { status: 409, message: 'no two-factor enrolment in progress; start one first' },
  twoFactorNotEnabled: { status: 409, message: 'two-factor sign-in is not enabled' },

  // Self-care (docs/self-care.md).
  selfCareDisabled: { status: 403, message: 'self-care is turned off' },
  selfCareFeatureOff: { status: 403, message: (feature: string) => `${feature} is turned off in self-care` },
  signInCodeRejected: { status: 401, message: 'invalid or expired code' },
  currentPasswordWrong: { status: 400, message: 'current_password is incorrect' },
  planNotSelfService: { status: 403, message: 'this plan is not offered for self-service' },
  accountInactive: { status: 409, message: 'your account is deactivated: ask your provider' },
  planChangeBeyondPeriod: {
    status: 409,
    message: (daysLeft: number | string, periodDays: number | string) =>
      `your plan can change once at most one period of it is left: ${daysLeft} days are left of a ${periodDays}-day plan`,
  },
  ownPriceNoSelfService: {
    status: 409,
    message: 'your price is set by your provider: ask them to change your plan',
  },
  topupNotOffered: { status: 400, message: 'gb is not one of the data top-ups offered' },
  walletShort: { status: 402, message: 'wallet balance does not cover the price' },

  // 5xx: something the caller cannot fix is not working.
  internal: { status: 500, message: 'internal server error' },
  routerApiFailed: {
    status: 500,
    message: (kind: string, why: string) => `access server API failed (${kind}): ${why}`,
  },
  providerRejected: {
    status: 502,
    message: (provider: string, why: string) => `${provider} rejected the message: ${why}`,
  },
  providerUnexpected: {
    status: 502,
    message: (provider: string, why: string) => `${provider} answered unexpectedly: ${why}`,
  },
  serviceUnavailable: { status: 503, message: 'service unavailable' },
  starting: { status: 503, message: 'starting' },
  databaseUnreachable: { status: 503, message: 'database unreachable' },
  consoleUnavailable: { status: 503, message: (why: string) => why },
  rendererNotRunning: { status: 503, message: 'pdf renderer is not running' },
  rendererBusy: { status: 503, message: 'pdf renderer is busy, retry shortly' },
  rendererRestarting: { status: 503, message: 'pdf renderer is restarting, retry shortly' },
  providerUnavailable: {
    status: 503,
    message: (provider: string, attempts: number, why: string) =>
      `${provider} unavailable after ${attempts} attempts: ${why}`,
  },
  renderTimeout: { status: 504, message: 'pdf render timed out' },
  upstreamTimeout: { status: 504, message: 'upstream timeout' },
} as const satisfies Record<string, { status: number; message: Message }>;

export type FailureName = keyof typeof FAILURES;
/** Failures whose message needs no detail. */
export type FixedFailure = {
  [N in FailureName]: (typeof FAILURES)[N]['message'] extends string ? N : never;
}[FailureName];
type DetailOf<N extends FailureName> = (typeof FAILURES)[N]['message'] extends (...args: infer A) => string ? A : [];

/** A failure with its detail filled in: what the API answers (and a bulk job reports per id). */
export interface Failure {
  status: number;
  message: string;
}

export function failure<N extends FailureName>(name: N, ...detail: DetailOf<N>): Failure {
  const { status, message } = FAILURES[name] as { status: number; message: Message };
  return {
    status,
    message: typeof message === 'string' ? message : (message as (...a: unknown[]) => string)(...detail),
  };
}

/** The API error of a failure: `throw fail('invoiceNotFound')`. */
export function fail<N extends FailureName>(name: N, ...detail: DetailOf<N>): ApiError {
  return errorOf(failure(name, ...detail));
}

export function errorOf(f: Failure): ApiError {
  return new ApiError(f.status, f.message);
}
