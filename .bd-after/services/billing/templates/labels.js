"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.labelsFor = labelsFor;
exports.isRtl = isRtl;
const en = {
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
    includes: 'Includes invoices',
    statuses: { pending: 'Pending', partial: 'Partially paid', paid: 'Paid', overdue: 'Overdue', void: 'Void' },
};
const ar = {
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
    includes: 'يشمل الفواتير',
    statuses: { pending: 'قيد الانتظار', partial: 'مدفوعة جزئيا', paid: 'مدفوعة', overdue: 'متأخرة', void: 'ملغاة' },
};
const LABELS = { en, ar };
/** Languages written right to left (the `language` setting's description names them). */
const RTL = new Set(['ar', 'fa', 'he', 'ur', 'ps', 'sd', 'yi', 'ku']);
function labelsFor(language) {
    return LABELS[language] ?? en;
}
function isRtl(language) {
    return RTL.has(language);
}
//# sourceMappingURL=labels.js.map