/**
 * The PPPoE password (the one the router uses, and this page): changing it disconnects the live
 * session so the new one applies, and ends every other sign-in; this page carries on with the
 * fresh token the API answers. Also the messages the operator sent.
 */
import { useState } from 'preact/hooks';
import { addTexts, t } from '/console/i18n.js';
import { dateTime } from '/console/format.js';
import { Form, html, Loaded, notify, Pager, useLoad } from '/console/ui.js';
import { ApiError, my } from './api.js';
import { session } from './session.js';

addTexts({
  ar: {
    Password: 'كلمة المرور',
    'Current password': 'كلمة المرور الحالية',
    'New password': 'كلمة المرور الجديدة',
    'New password again': 'كلمة المرور الجديدة مرة أخرى',
    'Change the password': 'تغيير كلمة المرور',
    'This is also the password of your internet connection: change it on your router too.':
      'هذه أيضًا كلمة مرور اتصالك بالإنترنت: غيّرها في جهاز الراوتر أيضًا.',
    'The two new passwords differ.': 'كلمتا المرور الجديدتان مختلفتان.',
    'Password changed. Your connection was restarted: sign your router in with the new password.':
      'تم تغيير كلمة المرور. أُعيد تشغيل اتصالك: أدخل كلمة المرور الجديدة في جهاز الراوتر.',
    Messages: 'الرسائل',
    'No messages yet.': 'لا رسائل بعد.',
    Sent: 'أُرسلت',
    'Waiting to be sent': 'بانتظار الإرسال',
    'Not delivered': 'لم تُسلَّم',
    Sending: 'قيد الإرسال',
    expiry_reminder: 'تذكير بانتهاء الاشتراك',
  },
});

export function PasswordScreen() {
  const [done, setDone] = useState(false);
  return html`<h1>${t('Password')}</h1>
    <p class="muted">${t('This is also the password of your internet connection: change it on your router too.')}</p>
    ${done && html`<p class="message" role="status">${t('Password changed. Your connection was restarted: sign your router in with the new password.')}</p>`}
    <${Form}
      submitLabel="Change the password"
      fields=${[
        {
          name: 'current_password',
          label: 'Current password',
          type: 'password',
          required: true,
          autocomplete: 'current-password',
        },
        { name: 'new_password', label: 'New password', type: 'password', required: true, autocomplete: 'new-password' },
        { name: 'again', label: 'New password again', type: 'password', required: true, autocomplete: 'new-password' },
      ]}
      onSubmit=${async ({ current_password, new_password, again }, form) => {
        setDone(false);
        if (new_password !== again) throw new ApiError(400, 'The two new passwords differ.');
        const res = await my('POST', '/password', { body: { current_password, new_password } });
        form.reset();
        // Every earlier token ended with the old password: this one is the page's from now on.
        session.replace(res.data.token);
        setDone(true);
        notify(t('Password changed. Your connection was restarted: sign your router in with the new password.'));
      }}
    />`;
}

/** A message's delivery state in words. */
const DELIVERY = { pending: 'Waiting to be sent', sending: 'Sending', sent: 'Sent', failed: 'Not delivered' };

export function NotificationsScreen() {
  const [page, setPage] = useState(1);
  const state = useLoad(() => my('GET', '/notifications', { query: { page, limit: 20 } }), [page]);
  return html`<h1>${t('Messages')}</h1>
    <${Loaded} state=${state}>${(res) =>
      res.data.length === 0
        ? html`<p class="muted">${t('No messages yet.')}</p>`
        : html`<ul class="rows">${res.data.map(
            (n) => html`<li>
                <span class="row-head"><strong>${t(n.kind)}</strong> <span class=${`badge ${n.status}`}>${t(DELIVERY[n.status] ?? n.status)}</span></span>
                ${n.message && html`<p class="message-text">${n.message}</p>`}
                <span class="muted">${dateTime(n.sent_at ?? n.created_at)}</span>
              </li>`,
          )}</ul>
            <${Pager} pagination=${res.pagination} onPage=${setPage} />`}</${Loaded}>`;
}
