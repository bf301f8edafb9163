/**
 * Bulk actions on the selected subscribers: POST /api/subscribers/bulk-action answers the per-id
 * outcome when it finishes within the request, else 202 { job_id }; the job is then polled on
 * GET /api/subscribers/bulk-jobs/:id until it is done, with a live progress bar.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from './api.js';
import { moneySum } from './format.js';
import { addTexts, t } from './i18n.js';
import { options, plans, resellers } from './lookups.js';
import { session } from './session.js';
import { ErrorMessage, Form, html, Loaded, notify, Table, useConfirm, useLoad } from './ui.js';

addTexts({
  ar: {
    'Bulk job': 'مهمة جماعية',
    '{action} {n} subscribers?': '{action} {n} مشترك؟',
    'Bulk action on {n} subscribers': 'إجراء جماعي على {n} مشترك',
    'Run {action} on {n}': 'تنفيذ {action} على {n}',
    'Job #{id} ({action}):': 'المهمة رقم {id} ({action}):',
    'Job #{id}:': 'المهمة رقم {id}:',
    ', {processed} of {total} processed, {succeeded} succeeded, {failed} failed.':
      '، عولج {processed} من {total}، نجح {succeeded}، فشل {failed}.',
    ', {succeeded} succeeded, {failed} failed.': '، نجح {succeeded}، فشل {failed}.',
    'Bulk job progress': 'تقدّم المهمة الجماعية',
    Failed: 'ما فشل',
    'Set static IP': 'تعيين عنوان IP ثابت',
    'Set daily quota': 'تعيين الحصة اليومية',
    'Set monthly quota': 'تعيين الحصة الشهرية',
    'Set price': 'تعيين السعر',
    'Change realm': 'تغيير النطاق',
    'Live sessions are cut.': 'تُقطع الجلسات الحية.',
    'They can connect again.': 'يمكنهم الاتصال مجددًا.',
    'They are disconnected and refused.': 'يُفصلون ويُرفض اتصالهم.',
    'The refill fee is charged per subscriber.': 'تُحتسب رسوم إعادة التعبئة لكل مشترك.',
    'They are deleted (soft delete) and lose access.': 'يُحذفون (حذف مؤقت) ويفقدون الوصول.',
    'They are disconnected and move to the plan.': 'يُفصلون وينتقلون إلى الباقة.',
    'They move to another reseller.': 'ينتقلون إلى موزّع آخر.',
    'They are disconnected to take the address.': 'يُفصلون ليأخذوا العنوان.',
    'Their renewal price changes.': 'يتغيّر سعر تجديدهم.',
    'The rename fee is charged per subscriber when set.': 'تُحتسب رسوم إعادة التسمية لكل مشترك إن وُجدت.',
    'Each renewal debits the reseller balance its price and creates an invoice; the {n} invoices total {total}, tax included.':
      'يخصم كل تجديد سعره من رصيد الموزّع وينشئ فاتورة؛ مجموع الفواتير الـ {n} هو {total} شاملًا الضريبة.',
    'Each renewal debits the reseller balance its price and creates an invoice; {priced} of the {n} invoices total {total}, tax included.':
      'يخصم كل تجديد سعره من رصيد الموزّع وينشئ فاتورة؛ مجموع {priced} من الفواتير الـ {n} هو {total} شاملًا الضريبة.',
  },
});

/** An action's name in the page's language, in lower case within a sentence ("Run deactivate on 5"). */
const actionName = (name) => t(BULK_ACTIONS[name]?.label ?? name).toLowerCase();

addTexts({
  ar: {
    'Set IPv6 prefix': 'تعيين بادئة IPv6',
    'They are disconnected to take the prefix.': 'يُفصلون ليأخذوا البادئة.',
    'Which prefix': 'أي بادئة',
    'IPv6 prefix (WAN)': 'بادئة IPv6 (الواجهة الخارجية)',
    'Delegated IPv6 prefix (LAN)': 'بادئة IPv6 المفوَّضة (الشبكة المحلية)',
    'IPv6 prefix (one subscriber)': 'بادئة IPv6 (مشترك واحد)',
    'or draw from an IPv6 pool of ours': 'أو اسحب من أحد مجمّعات IPv6 لدينا',
  },
});

addTexts({
  ar: {
    'Routers: {ok} disconnected or offline, {failed} failed (may still be online), {pending} waiting for an answer.':
      'الموجّهات: {ok} فُصل أو غير متصل، {failed} فشل (قد يبقى متصلًا)، {pending} بانتظار الرد.',
  },
});

const gb = { name: 'gb', label: 'GB', type: 'number', min: 0, max: 10000, required: true };

/** Each action: its permission, its payload fields, and whether it changes money or access. */
const BULK_ACTIONS = {
  renew: {
    permission: 'subscribers.renew',
    label: 'Renew',
    confirm: 'Each renewal debits the reseller balance and creates an invoice.',
  },
  disconnect: { permission: 'subscribers.disconnect', label: 'Disconnect', confirm: 'Live sessions are cut.' },
  enable: { permission: 'subscribers.inactivate', label: 'Activate', confirm: 'They can connect again.' },
  disable: { permission: 'subscribers.inactivate', label: 'Deactivate', confirm: 'They are disconnected and refused.' },
  reset_fup: { permission: 'subscribers.reset_fup', label: 'Reset FUP' },
  reset_mac: { permission: 'subscribers.reset_mac', label: 'Reset MAC' },
  refill: {
    permission: 'subscribers.refill_quota',
    label: 'Refill quota',
    confirm: 'The refill fee is charged per subscriber.',
  },
  delete: {
    permission: 'subscribers.delete',
    label: 'Delete',
    confirm: 'They are deleted (soft delete) and lose access.',
  },
  set_service: {
    permission: 'subscribers.change_service',
    label: 'Change plan',
    confirm: 'They are disconnected and move to the plan.',
    fields: (lk) => [
      {
        name: 'service_id',
        label: 'New plan',
        type: 'select',
        numeric: true,
        options: options(lk.plans),
        required: true,
      },
      { name: 'charge_difference', label: 'Charge the prorated difference', type: 'checkbox' },
    ],
  },
  set_reseller: {
    permission: 'subscribers.transfer',
    label: 'Move to reseller',
    confirm: 'They move to another reseller.',
    fields: (lk) => [
      {
        name: 'reseller_id',
        label: 'Reseller',
        type: 'select',
        numeric: true,
        options: options(lk.resellers),
        required: true,
      },
    ],
  },
  set_static_ip: {
    permission: 'subscribers.edit',
    label: 'Set static IP',
    confirm: 'They are disconnected to take the address.',
    fields: () => [
      { name: 'ip', label: 'IPv4 address (one subscriber)' },
      { name: 'pool_name', label: 'or draw from pool' },
    ],
  },
  set_static_ipv6: {
    permission: 'subscribers.edit',
    label: 'Set IPv6 prefix',
    confirm: 'They are disconnected to take the prefix.',
    fields: () => [
      {
        name: 'field',
        label: 'Which prefix',
        type: 'select',
        required: true,
        options: [
          { value: 'ipv6_prefix', label: 'IPv6 prefix (WAN)' },
          { value: 'delegated_ipv6_prefix', label: 'Delegated IPv6 prefix (LAN)' },
        ],
      },
      { name: 'prefix', label: 'IPv6 prefix (one subscriber)' },
      { name: 'pool_name', label: 'or draw from an IPv6 pool of ours' },
    ],
  },
  set_daily_quota: { permission: 'subscribers.edit', label: 'Set daily quota', fields: () => [gb] },
  set_monthly_quota: { permission: 'subscribers.edit', label: 'Set monthly quota', fields: () => [gb] },
  set_price: {
    permission: 'subscribers.set_price',
    label: 'Set price',
    confirm: 'Their renewal price changes.',
    fields: () => [
      { name: 'price', label: 'Price', type: 'number', min: 0, max: 10000, required: true },
      { name: 'override_price', label: 'Use it instead of the plan price', type: 'checkbox', value: true },
    ],
  },
  set_auto_renew: {
    permission: 'subscribers.edit',
    label: 'Set auto-renew',
    fields: () => [
      {
        name: 'auto_renew',
        label: 'Renew automatically from the wallet at expiry',
        type: 'checkbox',
        value: true,
      },
    ],
  },
  rename: {
    permission: 'subscribers.rename',
    label: 'Change realm',
    confirm: 'The rename fee is charged per subscriber when set.',
    fields: () => [
      { name: 'old_realm', label: 'Old realm', required: true },
      { name: 'new_realm', label: 'New realm', required: true },
    ],
  },
};

const allowedBulkActions = () => Object.entries(BULK_ACTIONS).filter(([, a]) => session.can(a.permission));

function JobProgress({ jobId, names, onFinished }) {
  const [job, setJob] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    let stop = false;
    let timer;
    async function poll() {
      try {
        const res = await api('GET', `/api/subscribers/bulk-jobs/${jobId}`);
        if (stop) return;
        setJob(res.data);
        setError(null);
        if (res.data.finished_at || res.data.status === 'done' || res.data.status === 'failed') {
          notify(`Bulk job ${jobId} ${res.data.status}`);
          onFinished?.();
          return;
        }
      } catch (err) {
        if (stop) return;
        setError(err);
        if (!err.retryable) return;
      }
      timer = setTimeout(poll, 1000);
    }
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [jobId]);
  const finished = job && job.status !== 'running';
  return html`<div class="job" aria-live="polite">
    <${ErrorMessage} error=${error} />
    ${
      job &&
      html`<p>${t('Job #{id} ({action}):', { id: job.id, action: actionName(job.action) })} <strong class="job-status">${t(job.status)}</strong>${t(', {processed} of {total} processed, {succeeded} succeeded, {failed} failed.', { processed: job.processed, total: job.total, succeeded: job.succeeded.length, failed: job.failed.length })}</p>
      <progress max=${job.total} value=${job.processed} aria-label=${t('Bulk job progress')}>${job.processed}/${job.total}</progress>
      ${finished && html`<${RouterOutcomes} jobId=${job.id} /><${FailedIds} failed=${job.failed} names=${names} />`}`
    }
  </div>`;
}

/**
 * What the routers answered for a finished job's disconnects (GET bulk-jobs/:id `router`): the
 * job's "succeeded" is the database change; a subscriber whose disconnect failed may still be
 * online. Polled while answers are still coming, for a minute at most.
 */
function RouterOutcomes({ jobId }) {
  const [router, setRouter] = useState(null);
  useEffect(() => {
    let stop = false;
    let timer;
    let tries = 0;
    async function poll() {
      try {
        const res = await api('GET', `/api/subscribers/bulk-jobs/${jobId}`);
        if (stop) return;
        setRouter(res.data.router);
        if (!res.data.router || res.data.router.pending === 0 || ++tries >= 30) return;
      } catch {
        if (stop) return;
      }
      timer = setTimeout(poll, 2000);
    }
    poll();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [jobId]);
  if (!router) return null;
  return html`<p class=${`router-outcomes${router.failed ? ' error' : ''}`}>
    ${t('Routers: {ok} disconnected or offline, {failed} failed (may still be online), {pending} waiting for an answer.', router)}
  </p>`;
}

/** Per-id outcome: every id not listed here succeeded. */
function FailedIds({ failed, names }) {
  return html`<${Table} rows=${failed} caption="Failed" empty="" columns=${[
    ['id', 'Subscriber', (f) => html`<a href=${`#/subscribers/${f.id}`}>${names?.get(f.id) ?? `#${f.id}`}</a>`],
    ['reason', 'Reason'],
  ]} />`;
}

function Outcome({ outcome, onFinished }) {
  if (outcome.jobId && !outcome.data)
    return html`<${JobProgress} jobId=${outcome.jobId} names=${outcome.names} onFinished=${onFinished} />`;
  const { succeeded, failed } = outcome.data;
  return html`<div class="job">
    <p>${t('Job #{id}:', { id: outcome.jobId })} <strong class="job-status">${t('done')}</strong>${t(', {succeeded} succeeded, {failed} failed.', { succeeded: succeeded.length, failed: failed.length })}</p>
    ${outcome.jobId && html`<${RouterOutcomes} jobId=${outcome.jobId} />`}
    <${FailedIds} failed=${failed} names=${outcome.names} />
  </div>`;
}

/**
 * The bulk renew's warning: what the renewal invoices will ask together, tax included (each
 * selected row's `renewal.total`, summed per currency). A row whose plan is gone has no price.
 */
function renewalsText(n, renewals) {
  const priced = renewals.filter(Boolean);
  const total = moneySum(priced.map((r) => ({ amount: r.total, currency: r.currency })));
  if (priced.length === n)
    return t(
      'Each renewal debits the reseller balance its price and creates an invoice; the {n} invoices total {total}, tax included.',
      { n, total },
    );
  return t(
    'Each renewal debits the reseller balance its price and creates an invoice; {priced} of the {n} invoices total {total}, tax included.',
    { n, priced, total },
  );
}

/**
 * The panel of the selection `ids`. A finished job (`onFinished`) has used the selection up: the
 * page clears it, and the panel then shows the job's outcome alone, without the form.
 */
export function BulkPanel({ picked, onFinished }) {
  const ids = [...picked.keys()];
  const allowed = allowedBulkActions();
  const [action, setAction] = useState(allowed[0]?.[0]);
  const [outcome, setOutcome] = useState(null);
  const [running, setRunning] = useState(false);
  const [confirmDialog, ask] = useConfirm();
  const reported = useRef(new WeakSet());
  const lookups = useLoad(async () => ({ plans: await plans(), resellers: await resellers() }), []);
  if (!session.isAdminOrReseller || allowed.length === 0) return null;
  if (ids.length === 0 && !outcome) return null;
  // Once per job: the progress is shown again (and polled once more) after the panel changes shape.
  const finished = (done) => {
    if (reported.current.has(done)) return;
    reported.current.add(done);
    setRunning(false);
    onFinished?.();
  };
  if (ids.length === 0 || running)
    return html`<section class="bulk" aria-labelledby="bulk-title">
      <h2 id="bulk-title">${t('Bulk job')}</h2>
      <${Outcome} outcome=${outcome} onFinished=${() => finished(outcome)} />
    </section>`;
  const def = BULK_ACTIONS[action];
  const warning =
    def.confirm &&
    (action === 'renew'
      ? renewalsText(
          ids.length,
          [...picked.values()].map((p) => p.renewal),
        )
      : t(def.confirm));
  return html`<section class="bulk" aria-labelledby="bulk-title">
    <h2 id="bulk-title">${t('Bulk action on {n} subscribers', { n: ids.length })}</h2>
    <div class="field">
      <label for="bulk-action">${t('Action')}</label>
      <select id="bulk-action" value=${action} onChange=${(e) => {
        setAction(e.currentTarget.value);
        setOutcome(null);
      }}>
        ${allowed.map(([name, a]) => html`<option value=${name}>${t(a.label)}</option>`)}
      </select>
    </div>
    <${Loaded} state=${lookups}>${(lk) => html`
      ${warning && html`<p class="warning">${warning}</p>`}
      <${Form} key=${action} className="form inline" fields=${def.fields?.(lk) ?? []} submitLabel=${t('Run {action} on {n}', { action: actionName(action), n: ids.length })}
        onSubmit=${async (payload) => {
          const go =
            !def.confirm ||
            (await ask({
              title: t('{action} {n} subscribers?', { action: t(def.label), n: ids.length }),
              text: warning,
              action: t('Yes, {action}', { action: actionName(action) }),
              danger: true,
            }));
          if (!go) return;
          setOutcome(null);
          const res = await api('POST', '/api/subscribers/bulk-action', { body: { ids, action, payload } });
          const next = res.status === 202 ? { jobId: res.data.job_id } : { jobId: res.job_id, data: res.data };
          // The selection is cleared when the job ends: the outcome keeps the names of its rows.
          next.names = new Map([...picked].map(([id, p]) => [id, p.username]));
          setOutcome(next);
          if (res.status === 202) setRunning(true);
          else finished(next);
        }} />`}</${Loaded}>
    ${outcome && html`<${Outcome} outcome=${outcome} onFinished=${() => finished(outcome)} />`}
    ${confirmDialog}
  </section>`;
}
