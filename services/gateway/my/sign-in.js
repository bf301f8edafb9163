/**
 * Sign-in with the PPPoE username and password the subscriber already has, or (setting
 * `self_care_code_sign_in`) with a one-time code sent to the phone. Nothing typed is kept: the
 * form's fields are cleared once the token is in hand.
 */
import { useEffect, useState } from 'preact/hooks';
import { addTexts, t } from '/console/i18n.js';
import { Form, html } from '/console/ui.js';
import { my } from './api.js';
import { LanguageSwitch } from './language.js';
import { session } from './session.js';

addTexts({
  ar: {
    'My account': 'حسابي',
    'Sign in': 'تسجيل الدخول',
    Username: 'اسم المستخدم',
    Password: 'كلمة المرور',
    'Your internet username and password, as on your router.':
      'اسم المستخدم وكلمة المرور الخاصان بالإنترنت، كما في جهاز الراوتر.',
    'Sign in with a code sent to my phone': 'الدخول برمز يُرسل إلى هاتفي',
    'Sign in with my password': 'الدخول بكلمة المرور',
    'Send the code': 'أرسل الرمز',
    'The 6-digit code': 'الرمز المكوّن من 6 أرقام',
    'If this username has a phone with us, a code is on its way. It works for 5 minutes.':
      'إذا كان لاسم المستخدم هذا هاتف مسجّل لدينا، فالرمز في الطريق. وهو صالح لمدة 5 دقائق.',
    'Another username': 'اسم مستخدم آخر',
  },
});

function PasswordForm() {
  return html`<${Form}
    submitLabel="Sign in"
    fields=${[
      { name: 'username', label: 'Username', required: true, autocomplete: 'username' },
      { name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password' },
    ]}
    onSubmit=${async (values, form) => {
      const res = await my('POST', '/login', { body: values });
      form.reset();
      session.start(res.data.token);
      if (location.hash && location.hash !== '#/') location.hash = '#/';
    }}
  />`;
}

function CodeForm() {
  const [username, setUsername] = useState(null);
  if (!username)
    return html`<${Form}
      submitLabel="Send the code"
      fields=${[{ name: 'username', label: 'Username', required: true, autocomplete: 'username' }]}
      onSubmit=${async (values) => {
        await my('POST', '/login/code', { body: values });
        setUsername(values.username);
      }}
    />`;
  return html`<p class="message" role="status">${t('If this username has a phone with us, a code is on its way. It works for 5 minutes.')}</p>
    <${Form}
      submitLabel="Sign in"
      fields=${[{ name: 'code', label: 'The 6-digit code', required: true, autocomplete: 'one-time-code', inputmode: 'numeric' }]}
      onSubmit=${async (values, form) => {
        const res = await my('POST', '/login/code/verify', { body: { username, code: values.code } });
        form.reset();
        session.start(res.data.token);
      }}
    >
      <button type="button" class="link" onClick=${() => setUsername(null)}>${t('Another username')}</button>
    </${Form}>`;
}

export function SignIn({ operatorName, codeSignIn }) {
  const [withCode, setWithCode] = useState(false);
  useEffect(() => {
    document.title = `${t('Sign in')} · ${operatorName || t('My account')}`;
  }, []);
  return html`<main id="main" class="my-main signin">
    <div class="signin-head">
      <h1>${operatorName || t('My account')}</h1>
      <${LanguageSwitch} />
    </div>
    <h2>${t('Sign in')}</h2>
    ${session.notice && html`<p class="message" role="alert">${session.notice}</p>`}
    ${withCode ? html`<${CodeForm} />` : html`<p class="muted">${t('Your internet username and password, as on your router.')}</p><${PasswordForm} />`}
    ${
      codeSignIn &&
      html`<p><button type="button" class="link" onClick=${() => setWithCode(!withCode)}>
      ${withCode ? t('Sign in with my password') : t('Sign in with a code sent to my phone')}</button></p>`
    }
  </main>`;
}
