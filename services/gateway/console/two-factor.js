/**
 * Two-factor sign-in in the console (docs/two-factor.md): the signed-in manager's own security
 * page (status, enrolment with the QR code, confirmation, recovery codes shown once, new codes,
 * turning it off) and the second step of the sign-in page. A manager whose token may only enrol
 * (setting require_two_factor) is kept on this page until it has.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { t } from './i18n.js';
import { session } from './session.js';
import { date, Form, html, Loaded, notify, useLoad } from './ui.js';

const CODE_FIELD = {
  name: 'code',
  label: 'Code',
  required: true,
  hint: t('The 6 digits your authenticator app shows, or a recovery code'),
};

/** The sign-in page's second step: the login's challenge and a code; `onBack` starts over. */
export function SecondStep({ challenge, onBack }) {
  return html`<p>${t('Enter the code from your authenticator app.')}</p>
    <${Form} submitLabel="Verify" fields=${[CODE_FIELD]} onSubmit=${async ({ code }) => {
      const res = await api('POST', '/api/auth/login/verify', { body: { challenge, code } });
      session.start(res.data.token);
    }} />
    <button type="button" class="link" onClick=${onBack}>${t('Back to sign in')}</button>`;
}

/** Recovery codes as the API answered them, once: the page shows them until "Done". */
function RecoveryCodes({ codes, onDone }) {
  return html`<section aria-labelledby="recovery-codes">
    <h2 id="recovery-codes">${t('Recovery codes')}</h2>
    <p class="message" role="alert">${t('Shown only now: keep them somewhere safe. Each one signs in once without the app.')}</p>
    <ul class="recovery-codes">${codes.map((c) => html`<li><code>${c}</code></li>`)}</ul>
    <button type="button" onClick=${onDone}>${t('Done')}</button>
  </section>`;
}

/** The enrolment in progress: the QR code (and its secret, to type in), and the confirmation. */
function Enrolment({ enrolment, onConfirmed }) {
  return html`<section aria-labelledby="enrol">
    <h2 id="enrol">${t('Scan the QR code with your authenticator app')}</h2>
    <img class="qr" src=${enrolment.qr} width="240" height="240" alt=${t('QR code for your authenticator app')} />
    <p>${t('Or type this key:')} <code class="secret">${enrolment.secret}</code></p>
    <${Form} submitLabel="Turn on" fields=${[{ ...CODE_FIELD, hint: t('The 6 digits your authenticator app shows') }]}
      onSubmit=${async ({ code }) => {
        const res = await api('POST', '/api/auth/two-factor/confirm', { body: { code } });
        // A token that could only enrol gives way to a full one.
        if (res.data.token) session.start(res.data.token);
        onConfirmed(res.data.recovery_codes);
        notify(t('Two-factor sign-in is on'));
      }} />
  </section>`;
}

/** What the manager can do once it is on: new recovery codes, or turn it off (each with a code). */
function Enabled({ status, onCodes, onOff }) {
  return html`<p>${t('Two-factor sign-in is on since {date}. Unused recovery codes: {left}.', {
    date: date(status.enabled_at),
    left: status.recovery_codes_left,
  })}</p>
    <section aria-labelledby="new-codes">
      <h2 id="new-codes">${t('New recovery codes')}</h2>
      <${Form} submitLabel="Make new recovery codes" fields=${[CODE_FIELD]} onSubmit=${async ({ code }) => {
        const res = await api('POST', '/api/auth/two-factor/recovery-codes', { body: { code } });
        onCodes(res.data.recovery_codes);
      }} />
    </section>
    ${
      !status.required &&
      html`<section aria-labelledby="turn-off">
      <h2 id="turn-off">${t('Turn off')}</h2>
      <${Form} submitLabel="Turn off two-factor sign-in" fields=${[CODE_FIELD]} onSubmit=${async ({ code }) => {
        await api('POST', '/api/auth/two-factor/disable', { body: { code } });
        notify(t('Two-factor sign-in is off'));
        onOff();
      }} />
    </section>`
    }`;
}

export function TwoFactorPage() {
  const state = useLoad(() => api('GET', '/api/auth/two-factor').then((r) => r.data), []);
  const [enrolment, setEnrolment] = useState(null);
  const [codes, setCodes] = useState(null);
  async function start() {
    try {
      setEnrolment((await api('POST', '/api/auth/two-factor/enrol', { body: {} })).data);
    } catch (err) {
      notify(err.explanation ?? err.message);
    }
  }
  function body(status) {
    if (codes)
      return html`<${RecoveryCodes} codes=${codes} onDone=${() => {
        setCodes(null);
        setEnrolment(null);
        state.reload();
      }} />`;
    if (status.enabled) return html`<${Enabled} status=${status} onCodes=${setCodes} onOff=${state.reload} />`;
    if (enrolment) return html`<${Enrolment} enrolment=${enrolment} onConfirmed=${setCodes} />`;
    return html`<p>${t('Two-factor sign-in is off: a password alone signs you in.')}</p>
      <button type="button" onClick=${start}>${t('Set up two-factor sign-in')}</button>`;
  }
  return html`<h1>${t('Two-factor sign-in')}</h1>
    ${
      session.claims?.enrolOnly &&
      html`<p class="message" role="alert">${t('Your administrator requires two-factor sign-in: set it up to continue.')}</p>`
    }
    <${Loaded} state=${state}>${body}</${Loaded}>`;
}
