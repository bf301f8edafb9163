/**
 * Outgoing webhooks (docs/webhooks.md), admins only: endpoints with the events each receives, the
 * secret shown once at creation, each endpoint's deliveries with every attempt, and redelivery.
 * The events offered are the API's own list (`events` beside GET /api/webhooks), never a copy.
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { addTexts, t } from './i18n.js';
import { href } from './router.js';
import { ActionDialog, dateTime, html, KeyValues, Loaded, notify, Pager, Table, useLoad } from './ui.js';

addTexts(
  {},
  {
    events: ['Events', 'الأحداث'],
    enabled: ['Enabled', 'مفعّل'],
    disabled_reason: ['Why it was disabled', 'سبب التعطيل'],
    disabled_at: ['Disabled at', 'تاريخ التعطيل'],
    consecutive_failures: ['Consecutive failures', 'إخفاقات متتالية'],
    description: ['Description', 'الوصف'],
  },
);

function hookFields(events, hook = {}) {
  return [
    {
      name: 'url',
      label: 'URL',
      required: true,
      value: hook.url,
      hint: t('A public https address (private ones only with allow_private_targets).'),
    },
    { name: 'description', label: 'Description', value: hook.description },
    {
      name: 'events',
      label: 'Events',
      type: 'checkboxes',
      value: hook.events ?? [],
      options: events.map((e) => ({ value: e, label: e })),
    },
  ];
}

/** The create answer is the one place the secret appears: shown for copying, then gone. */
function SecretShown({ res }) {
  return html`<p>${t('The signing secret of {url}. Copy it now: it is not shown again.', { url: res.data.url })}</p>
    <p><code class="secret">${res.data.secret}</code></p>`;
}

export function WebhooksPage() {
  const state = useLoad(() => api('GET', '/api/webhooks'), []);
  return html`<section>
    <div class="page-head"><h1>${t('Webhooks')}</h1>
      <${Loaded} state=${state}>${(res) => html`<${ActionDialog} label="New webhook"
        fields=${[...hookFields(res.events), { name: 'secret', label: 'Secret (empty: generated)', type: 'password' }]}
        run=${(v) => api('POST', '/api/webhooks', { body: v })} showResult=${(r) => html`<${SecretShown} res=${r} />`}
        onDone=${() => {
          notify(t('Webhook created'));
          state.reload();
        }} />`}</${Loaded}>
    </div>
    <${Loaded} state=${state}>${(res) =>
      html`<${Table} rows=${res.data} empty="No webhook yet." columns=${[
        ['url', 'URL', (w) => html`<a href=${href(`/webhooks/${w.id}`)}>${w.url}</a>`],
        ['events', 'Events', (w) => w.events.join(', ')],
        [
          'enabled',
          'Enabled',
          (w) =>
            w.enabled
              ? t('yes')
              : html`${t('no')}${w.disabled_reason && html`<br /><small class="warning">${t(w.disabled_reason)}</small>`}`,
        ],
        ['consecutive_failures', 'Failures in a row'],
        [
          'actions',
          'Actions',
          (w) => html`
          <${ActionDialog} label=${t('Edit {name}', { name: w.url })} fields=${[...hookFields(res.events, w), { name: 'enabled', label: 'Enabled', type: 'checkbox', value: w.enabled }]}
            run=${(v) => api('PUT', `/api/webhooks/${w.id}`, { body: v })} onDone=${state.reload} />
          <${ActionDialog} label=${t('Delete {name}', { name: w.url })} danger confirm="Its deliveries and their attempts are deleted too."
            run=${() => api('DELETE', `/api/webhooks/${w.id}`)} onDone=${state.reload} />`,
        ],
      ]} />`}</${Loaded}>
  </section>`;
}

function Attempts({ rows }) {
  return html`<details><summary>${t('{n} attempts', { n: rows.length })}</summary>
    <${Table} rows=${rows} empty="Not attempted yet." columns=${[
      ['created_at', 'When', (a) => dateTime(a.created_at)],
      ['trigger', 'By'],
      ['status_code', 'Answer', (a) => a.status_code ?? a.error],
      ['duration_ms', 'ms'],
      ['response_body', 'Answer excerpt', (a) => a.response_body ?? '—'],
    ]} /></details>`;
}

export function WebhookPage({ id }) {
  const [query, setQuery] = useState({ page: 1, status: '' });
  const hook = useLoad(() => api('GET', `/api/webhooks/${id}`), [id]);
  const list = useLoad(
    () =>
      api('GET', `/api/webhooks/${id}/deliveries`, {
        query: { page: query.page, limit: 20, status: query.status || undefined },
      }),
    [id, query.page, query.status],
  );
  return html`<section>
    <p><a href=${href('/webhooks')}>${t('Webhooks')}</a></p>
    <${Loaded} state=${hook}>${(res) => html`<h1>${res.data.url}</h1>
      <${KeyValues} data=${res.data} keys=${['events', 'enabled', 'disabled_reason', 'disabled_at', 'consecutive_failures', 'description']} />`}</${Loaded}>
    <section class="card" aria-labelledby="h-deliveries"><h2 id="h-deliveries">${t('Deliveries')}</h2>
      <label>${t('Status')} <select onChange=${(e) => setQuery({ page: 1, status: e.currentTarget.value })}>
        ${['', 'pending', 'succeeded', 'failed'].map((s) => html`<option value=${s} selected=${s === query.status}>${s ? t(s) : t('all')}</option>`)}
      </select></label>
      <${Loaded} state=${list}>${(res) => html`<${Table} rows=${res.data} empty="No delivery yet." columns=${[
        ['created_at', 'Created', (d) => dateTime(d.created_at)],
        ['event', 'Event'],
        ['status', 'Status', (d) => t(d.status)],
        ['last_status_code', 'Last answer', (d) => d.last_status_code ?? d.last_error ?? '—'],
        ['next_attempt_at', 'Next attempt', (d) => dateTime(d.next_attempt_at)],
        ['attempt_log', 'Attempts', (d) => html`<${Attempts} rows=${d.attempt_log} />`],
        [
          'actions',
          'Actions',
          (
            d,
          ) => html`<${ActionDialog} label=${t('Redeliver {id}', { id: d.id })} confirm="The event is sent again now, with the same id."
            run=${() => api('POST', `/api/webhooks/${id}/deliveries/${d.id}/redeliver`, { body: {} })} onDone=${(r) => {
              notify(
                r.data.status === 'succeeded'
                  ? t('Delivered')
                  : t('Failed: {why}', { why: r.data.last_error ?? r.data.last_status_code }),
              );
              list.reload();
              hook.reload();
            }} />`,
        ],
      ]} />
      <${Pager} pagination=${res.pagination} onPage=${(page) => setQuery({ ...query, page })} />`}</${Loaded}>
    </section>
  </section>`;
}
