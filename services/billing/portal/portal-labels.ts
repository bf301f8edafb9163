/**
 * Words of the captive portal. The words it shares with the invoice (number, due date, balance,
 * statuses, how to pay) come from the documents' labels, so both pages say them the same way.
 * English is the fallback, as for documents; Arabic exercises the right-to-left layout.
 */
import { labelsFor, type Labels } from '../templates/labels';

export interface PortalLabels {
  doc: Labels;
  account: string;
  username: string;
  active: string;
  paidUntil: string;
  blocked: string;
  /** `date` arrives as HTML (a left-to-right fragment): the sentence places it. */
  expired: (date: string) => string;
  quota: string;
  overdue: string;
  openInvoices: string;
  noOpenInvoices: string;
  receipt: string;
  renewal: string;
  /** `plan` and `days` arrive as HTML. */
  renewalOf: (plan: string, days: string) => string;
  welcome: string;
  unknown: string;
  payOnline: string;
  redeemTitle: string;
  pin: string;
  redeemButton: string;
  /** `what` arrives as HTML: the amount credited or the plan renewed. */
  redeemed: (what: string) => string;
  redeemFailed: string;
}

const en: Omit<PortalLabels, 'doc'> = {
  account: 'Your account',
  username: 'Username',
  active: 'Your internet access is active.',
  paidUntil: 'Paid until',
  blocked: 'Your internet access is blocked',
  expired: (date) => `Your subscription expired on ${date}.`,
  quota: 'Your data quota is used up.',
  overdue: 'An invoice is overdue.',
  openInvoices: 'Open invoices',
  noOpenInvoices: 'You have no open invoices.',
  receipt: 'View invoice',
  renewal: 'Renewal price',
  renewalOf: (plan, days) => `${plan}, ${days} days`,
  welcome: 'Welcome',
  unknown:
    'This connection is not linked to a subscription we can show. If your internet access has stopped, pay as described below or contact us.',
  payOnline: 'Pay the renewal online',
  redeemTitle: 'Recharge card',
  pin: 'Card PIN',
  redeemButton: 'Redeem',
  redeemed: (what) => `Card accepted: ${what}.`,
  redeemFailed: 'The card was not accepted',
};

const ar: Omit<PortalLabels, 'doc'> = {
  account: 'حسابك',
  username: 'اسم المستخدم',
  active: 'اتصالك بالإنترنت فعّال.',
  paidUntil: 'مدفوع حتى',
  blocked: 'تم إيقاف اتصالك بالإنترنت',
  expired: (date) => `انتهى اشتراكك في ${date}.`,
  quota: 'لقد استهلكت حصة البيانات الخاصة بك.',
  overdue: 'لديك فاتورة متأخرة السداد.',
  openInvoices: 'الفواتير المستحقة',
  noOpenInvoices: 'لا توجد فواتير مستحقة.',
  receipt: 'عرض الفاتورة',
  renewal: 'سعر التجديد',
  renewalOf: (plan, days) => `${plan}، ${days} يومًا`,
  welcome: 'مرحبًا',
  unknown:
    'هذا الاتصال غير مرتبط باشتراك يمكننا عرضه. إذا توقف اتصالك بالإنترنت، ادفع كما هو موضح أدناه أو تواصل معنا.',
  payOnline: 'ادفع التجديد عبر الإنترنت',
  redeemTitle: 'بطاقة الشحن',
  pin: 'الرقم السري للبطاقة',
  redeemButton: 'اشحن',
  redeemed: (what) => `تم قبول البطاقة: ${what}.`,
  redeemFailed: 'لم يتم قبول البطاقة',
};

const PORTAL: Record<string, Omit<PortalLabels, 'doc'>> = { en, ar };

export function portalLabelsFor(language: string): PortalLabels {
  return { ...(PORTAL[language] ?? en), doc: labelsFor(language) };
}
