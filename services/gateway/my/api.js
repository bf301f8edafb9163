/**
 * Every call of the subscriber's page: `/api/my` with the subscriber's token, the API's
 * `{ success, message }` envelope, and a message in the page's language for each failure.
 */
import { addTexts, t } from '/console/i18n.js';
import { session } from './session.js';

addTexts({
  ar: {
    'The server cannot be reached. Check the connection and retry.':
      'تعذّر الوصول إلى الخادم. تحقق من الاتصال وأعد المحاولة.',
    'Too many tries. Please wait {n} seconds and retry.': 'محاولات كثيرة. يرجى الانتظار {n} ثانية ثم إعادة المحاولة.',
    'The service is unavailable right now. Retry in a moment.': 'الخدمة غير متاحة الآن. أعد المحاولة بعد قليل.',
    'Something went wrong ({status}). Please retry or call us.':
      'حدث خطأ ({status}). يرجى إعادة المحاولة أو الاتصال بنا.',
    // The API's own refusals a subscriber can meet.
    'invalid username or password': 'اسم المستخدم أو كلمة المرور غير صحيحة',
    'invalid or expired code': 'الرمز غير صحيح أو منتهي الصلاحية',
    'token revoked': 'انتهت الجلسة',
    'self-care is turned off': 'الخدمة الذاتية متوقفة',
    'current_password is incorrect': 'كلمة المرور الحالية غير صحيحة',
    'invalid PIN': 'الرقم السري غير صحيح',
    'card already used': 'البطاقة مستخدمة من قبل',
    'card is suspended': 'البطاقة موقوفة',
    'card has expired': 'انتهت صلاحية البطاقة',
    'too many failed card attempts; a manager can lift the lockout':
      'محاولات فاشلة كثيرة للبطاقات؛ يمكن للمشغّل رفع القفل',
    'already renewed today': 'تم التجديد اليوم بالفعل',
    'online payment is not configured': 'الدفع الإلكتروني غير مُعدّ',
    'nothing to pay': 'لا يوجد ما يُدفع',
    'wallet balance does not cover the price': 'رصيد المحفظة لا يغطي السعر',
    'this plan is not offered for self-service': 'هذه الباقة غير متاحة للاختيار الذاتي',
    'too many failed sign-ins; try again later': 'محاولات دخول فاشلة كثيرة؛ حاول لاحقًا',
    'your account is deactivated: ask your provider': 'حسابك موقوف: تواصل مع مزوّد الخدمة',
    'your price is set by your provider: ask them to change your plan': 'سعرك يحدده مزوّد الخدمة: اطلب منه تغيير باقتك',
    'Your plan can change once at most one period of it is left: {left} days are left of a {period}-day plan.':
      'يمكن تغيير باقتك عندما يتبقى منها مدة دورة واحدة على الأكثر: تبقى {left} يومًا من باقة مدتها {period} يومًا.',
  },
});

/** Refusals that carry figures: matched, then read from the catalogue with their figures. */
const WITH_FIGURES = [
  [
    /^your plan can change once at most one period of it is left: (\d+) days are left of a (\d+)-day plan$/,
    'Your plan can change once at most one period of it is left: {left} days are left of a {period}-day plan.',
    ['left', 'period'],
  ],
];

function withFigures(message) {
  for (const [pattern, text, names] of WITH_FIGURES) {
    const m = pattern.exec(message);
    if (m) return t(text, Object.fromEntries(names.map((n, i) => [n, m[i + 1]])));
  }
  return null;
}

export class ApiError extends Error {
  constructor(status, message, retryAfter) {
    super(message);
    this.status = status;
    this.retryAfter = retryAfter;
  }

  /** What the subscriber reads: the API's message in the page's language where the catalogue has it. */
  get explanation() {
    if (this.status === 0) return t('The server cannot be reached. Check the connection and retry.');
    if (this.status === 429)
      return t('Too many tries. Please wait {n} seconds and retry.', { n: this.retryAfter ?? 60 });
    if (this.status === 503) return t('The service is unavailable right now. Retry in a moment.');
    if (this.status >= 500)
      return t('Something went wrong ({status}). Please retry or call us.', { status: this.status });
    return withFigures(this.message) ?? t(this.message);
  }

  get retryable() {
    return this.status === 0 || this.status >= 500;
  }
}

/** `my('GET', '/account')` is the envelope of `GET /api/my/account`; `as: 'blob'` gives the file. */
export async function my(method, path, { body, query, as } = {}) {
  const headers = { accept: as === 'blob' ? '*/*' : 'application/json' };
  if (session.token) headers.authorization = `Bearer ${session.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const qs = query ? `?${new URLSearchParams(query)}` : '';
  let res;
  try {
    res = await fetch(`/api/my${path}${qs}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiError(0, err.message);
  }
  if (res.ok && as === 'blob') return res.blob();
  const json = (res.headers.get('content-type') ?? '').includes('application/json')
    ? await res.json().catch(() => null)
    : null;
  if (!res.ok) {
    const err = new ApiError(res.status, json?.message ?? res.statusText, res.headers.get('retry-after'));
    // A token that no longer works (expired, revoked by a password change elsewhere): sign in again.
    if (res.status === 401 && session.token && !path.startsWith('/login')) session.expire();
    throw err;
  }
  return json ?? {};
}
