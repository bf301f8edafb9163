export { isRtl } from '../../../shared/format';

/**
 * Words printed on invoice documents. English is the fallback for every language without its own
 * list; Arabic is provided because right-to-left layout must be exercised end to end.
 */
export interface Labels {
  invoice: string;
  statement: string;
  number: string;
  issueDate: string;
  dueDate: string;
  status: string;
  billTo: string;
  description: string;
  qty: string;
  unitPrice: string;
  amount: string;
  subtotal: string;
  tax: string;
  total: string;
  paid: string;
  balance: string;
  payments: string;
  date: string;
  method: string;
  reference: string;
  notes: string;
  howToPay: string;
  scanToView: string;
  downloadPdf: string;
  payOnline: string;
  includes: string;
  statuses: Record<string, string>;
  /** Payment methods (shared/billing/types.ts PAYMENT_METHODS) as printed. */
  methods: Record<string, string>;
}

const en: Labels = {
  invoice: 'Invoice',
  statement: 'Statement of pending invoices',
  number: 'Number',
  issueDate: 'Issue date',
  dueDate: 'Due date',
  status: 'Status',
  billTo: 'Bill to',
  description: 'Description',
  qty: 'Qty',
  unitPrice: 'Unit price',
  amount: 'Amount',
  subtotal: 'Subtotal',
  tax: 'Tax',
  total: 'Total',
  paid: 'Paid',
  balance: 'Balance due',
  payments: 'Payments',
  date: 'Date',
  method: 'Method',
  reference: 'Reference',
  notes: 'Notes',
  howToPay: 'How to pay',
  scanToView: 'Scan to view this invoice online',
  downloadPdf: 'Download PDF',
  payOnline: 'Pay online',
  includes: 'Includes invoices',
  statuses: { pending: 'Pending', partial: 'Partially paid', paid: 'Paid', overdue: 'Overdue', void: 'Void' },
  methods: {
    cash: 'Cash',
    card: 'Card',
    bank: 'Bank transfer',
    wallet: 'Wallet',
    prepaid_card: 'Prepaid card',
    other: 'Other',
  },
};

const ar: Labels = {
  invoice: 'فاتورة',
  statement: 'كشف الفواتير المستحقة',
  number: 'الرقم',
  issueDate: 'تاريخ الإصدار',
  dueDate: 'تاريخ الاستحقاق',
  status: 'الحالة',
  billTo: 'إلى',
  description: 'الوصف',
  qty: 'الكمية',
  unitPrice: 'سعر الوحدة',
  amount: 'المبلغ',
  subtotal: 'المجموع الفرعي',
  tax: 'الضريبة',
  total: 'الإجمالي',
  paid: 'المدفوع',
  balance: 'الرصيد المستحق',
  payments: 'الدفعات',
  date: 'التاريخ',
  method: 'الطريقة',
  reference: 'المرجع',
  notes: 'ملاحظات',
  howToPay: 'طريقة الدفع',
  scanToView: 'امسح الرمز لعرض الفاتورة',
  downloadPdf: 'تنزيل PDF',
  payOnline: 'ادفع الآن',
  includes: 'يشمل الفواتير',
  statuses: { pending: 'قيد الانتظار', partial: 'مدفوعة جزئيا', paid: 'مدفوعة', overdue: 'متأخرة', void: 'ملغاة' },
  methods: {
    cash: 'نقدًا',
    card: 'بطاقة',
    bank: 'تحويل مصرفي',
    wallet: 'المحفظة',
    prepaid_card: 'بطاقة مسبقة الدفع',
    other: 'أخرى',
  },
};

const LABELS: Record<string, Labels> = { en, ar };

export function labelsFor(language: string): Labels {
  return LABELS[language] ?? en;
}
