/** Building blocks every page shares: loading, messages, fields, dialogs, paging, formatting. */
import { h } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { date, dateTime } from './format.js';
import { addTexts, fieldLabel, t } from './i18n.js';

export const html = htm.bind(h);

// ---- formatting -------------------------------------------------------------------------------

// Money and dates have one format in the console, documents and messages (format.js).
export { date, dateTime, ltrText, money } from './format.js';

/** `used` bytes of a quota in GB, where no quota (null) is unlimited. */
export const quota = (used, gb) =>
  t('{used} of {quota}', { used: bytes(used), quota: gb === null || gb === undefined ? t('unlimited') : `${gb} GB` });

export function bytes(n) {
  if (n === null || n === undefined) return '—';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let v = Number(n);
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(i ? 1 : 0)} ${units[i]}`;
}

// ---- status line (announced to screen readers) ------------------------------------------------

const statusListeners = new Set();
export function notify(text) {
  statusListeners.forEach((l) => l(text));
}

export function StatusLine() {
  const [text, setText] = useState('');
  useEffect(() => {
    let timer;
    const show = (t) => {
      setText(t);
      clearTimeout(timer);
      timer = setTimeout(() => setText(''), 6000);
    };
    statusListeners.add(show);
    return () => {
      statusListeners.delete(show);
      clearTimeout(timer);
    };
  }, []);
  return html`<p class="status-line" role="status" aria-live="polite">${text}</p>`;
}

// ---- loading ----------------------------------------------------------------------------------

/** `{ data, error, loading, reload }` of an async read, reloaded when `deps` change. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const reload = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => mine === seq.current && setState({ data, error: null, loading: false }),
      (error) => mine === seq.current && setState({ data: null, error, loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

export function ErrorMessage({ error, onRetry }) {
  if (!error) return null;
  const text = error.explanation ?? String(error.message ?? error);
  return html`<div class="message error" role="alert">
    <span>${text}</span>
    ${onRetry && (error.retryable ?? true) && html` <button type="button" class="link" onClick=${onRetry}>${t('Retry')}</button>`}
  </div>`;
}

/** Loading, its error with Retry, or the children rendered from the data. */
export function Loaded({ state, children }) {
  if (state.error) return html`<${ErrorMessage} error=${state.error} onRetry=${state.reload} />`;
  if (state.loading && !state.data) return html`<p class="muted">${t('Loading…')}</p>`;
  return children(state.data);
}

// ---- fields and forms -------------------------------------------------------------------------
// Inputs are uncontrolled (defaultValue): a re-render after a failed submit keeps what was typed.

let fieldSeq = 0;
const useId = () => useRef(`f${++fieldSeq}`).current;

/**
 * One labelled input. Specs: `{ name, label, type, value, options, required, min, max, step, hint }`
 * with type text, password, number, int, ints (comma-separated integers), date, datetime, checkbox,
 * checkboxes (several values of `options`), select or textarea; `autocomplete` and `inputmode` for
 * a sign-in form (the subscriber's page).
 */
function Field({ spec, error }) {
  const id = useId();
  const { name, type = 'text', value, options, required, min, max, step, hint, placeholder } = spec;
  const label = t(spec.label);
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ') || undefined;
  const common = { id, name, required, 'aria-describedby': described, 'aria-invalid': error ? 'true' : undefined };
  const problem = error && html`<small id=${`${id}-error`} class="field-error">${error}</small>`;
  let control;
  if (type === 'select') {
    control = html`<select ...${common}>
      ${!required && html`<option value="">—</option>`}
      ${options.map((o) => html`<option value=${o.value} selected=${String(o.value) === String(value ?? '')}>${t(o.label)}</option>`)}
    </select>`;
  } else if (type === 'textarea') {
    control = html`<textarea ...${common} rows="3" placeholder=${placeholder && t(placeholder)} defaultValue=${value ?? ''}></textarea>`;
  } else if (type === 'checkboxes') {
    const chosen = new Set(value ?? []);
    return html`<fieldset class="field checkboxes" aria-describedby=${described}>
      <legend>${label}</legend>
      ${options.map((o) => html`<label><input type="checkbox" name=${name} value=${o.value} defaultChecked=${chosen.has(o.value)} /> ${t(o.label)}</label>`)}
      ${problem}
    </fieldset>`;
  } else if (type === 'checkbox') {
    return html`<div class="field checkbox">
      <input type="checkbox" ...${common} defaultChecked=${!!value} />
      <label for=${id}>${label}</label>
      ${problem}
    </div>`;
  } else {
    const inputType = { int: 'number', ints: 'text', datetime: 'datetime-local' }[type] ?? type;
    const numberStep = type === 'int' ? '1' : type === 'number' ? (step ?? 'any') : undefined;
    control = html`<input ...${common} type=${inputType} defaultValue=${value ?? ''} min=${min} max=${max} step=${numberStep}
      placeholder=${placeholder && t(placeholder)} autocomplete=${spec.autocomplete ?? (type === 'password' ? 'new-password' : 'off')}
      inputmode=${spec.inputmode} />`;
  }
  return html`<div class="field">
    <label for=${id}>${label}${required ? ' *' : ''}</label>
    ${control}
    ${hint && html`<small id=${`${id}-hint`} class="muted">${t(hint)}</small>`}
    ${problem}
  </div>`;
}

// ---- what a refused form says -----------------------------------------------------------------
// The API names the field it refuses by its API name (`reseller_id is required ...`, from the
// gateway's validator or a use case); the operator reads it in the field's own label, beside it.

addTexts({
  ar: {
    '{label} is required.': '{label} مطلوب.',
    '{label} must be at least {n}.': 'يجب ألا يقل {label} عن {n}.',
    '{label} must be at most {n}.': 'يجب ألا يزيد {label} عن {n}.',
    '{label} must be more than {n}.': 'يجب أن يكون {label} أكبر من {n}.',
    '{label} must be less than {n}.': 'يجب أن يكون {label} أقل من {n}.',
    '{label} needs at least {n} characters.': 'يحتاج {label} إلى {n} أحرف على الأقل.',
    '{label} takes at most {n} characters.': 'يقبل {label} {n} أحرف على الأكثر.',
    '{label} is not written as expected.': '{label} غير مكتوب بالشكل المتوقع.',
    '{label} must be a rate such as 10M/20M, with no backtick or %{.':
      'يجب أن يكون {label} معدلًا مثل 10M/20M، دون علامة ` أو %{.',
    '{label}: choose one of the offered values.': '{label}: اختر إحدى القيم المعروضة.',
    '{label} must be a number.': 'يجب أن يكون {label} رقمًا.',
    '{label} is not accepted here.': '{label} غير مقبول هنا.',
    'Please check {label}.': 'يرجى مراجعة {label}.',
  },
});

const PROBLEMS = [
  [/^is required\b/, '{label} is required.'],
  [/^must be >= (\S+)/, '{label} must be at least {n}.'],
  [/^must be <= (\S+)/, '{label} must be at most {n}.'],
  [/^must be > (\S+)/, '{label} must be more than {n}.'],
  [/^must be < (\S+)/, '{label} must be less than {n}.'],
  [/^must NOT have fewer than (\d+) (characters|items)/, '{label} needs at least {n} characters.'],
  [/^must NOT have more than (\d+) (characters|items)/, '{label} takes at most {n} characters.'],
  [/^must match pattern/, '{label} is not written as expected.'],
  [/^must be a rate such as/, '{label} must be a rate such as 10M/20M, with no backtick or %{.'],
  [/^must be one of/, '{label}: choose one of the offered values.'],
  [/^must be (integer|number)/, '{label} must be a number.'],
  [/^is not a known field/, '{label} is not accepted here.'],
];

const fieldLabelOf = (fields, name) => t(fields.find((f) => f.name === name).label);

/**
 * `{ name, text }` of an API refusal about one field (`name` is set when it is a field of the
 * form), else null. A missing field reads "<label> is required." whatever the status.
 */
export function fieldProblem(err, fields = []) {
  const m = /^([a-z][a-z0-9_]*)(?:[.[]\S*)? (.+?)\.?$/.exec(err?.message ?? '');
  if (!m) return null;
  const spec = fields.find((f) => f.name === m[1]);
  if (!spec && !/^(is required|must|is not)/.test(m[2])) return null;
  const label = spec ? t(spec.label) : fieldLabel(m[1]);
  for (const [pattern, text] of PROBLEMS) {
    const found = pattern.exec(m[2]);
    if (found) return { name: spec?.name, text: t(text, { label, n: found[1] }) };
  }
  return { name: spec?.name, text: `${label} ${m[2]}.` };
}

/** The form's values typed by the specs; empty optional fields are left out. */
function readForm(form, specs) {
  const out = {};
  for (const s of specs) {
    const el = form.elements.namedItem(s.name);
    if (!el) continue;
    if (s.type === 'checkbox') {
      out[s.name] = el.checked;
      continue;
    }
    if (s.type === 'checkboxes') {
      out[s.name] = [...form.querySelectorAll(`input[name="${s.name}"]:checked`)].map((c) => c.value);
      continue;
    }
    const raw = el.value.trim();
    if (raw === '') continue;
    if (s.type === 'number') out[s.name] = Number(raw);
    else if (s.type === 'int' || (s.type === 'select' && s.numeric)) out[s.name] = parseInt(raw, 10);
    else if (s.type === 'datetime') out[s.name] = new Date(raw).toISOString();
    else if (s.type === 'ints')
      out[s.name] = raw
        .split(/[\s,]+/)
        .filter(Boolean)
        .map((n) => parseInt(n, 10));
    else out[s.name] = raw;
  }
  return out;
}

/** A form of fields with a submit button, its error and a pending state. */
export function Form({ fields, submitLabel, onSubmit, children, className }) {
  const [error, setError] = useState(null);
  const [problem, setProblem] = useState(null);
  const [busy, setBusy] = useState(false);
  async function submit(e) {
    e.preventDefault();
    const form = e.currentTarget;
    setBusy(true);
    setError(null);
    setProblem(null);
    try {
      await onSubmit(readForm(form, fields), form);
    } catch (err) {
      const found = fieldProblem(err, fields);
      setProblem(found);
      // Said once: beside its field when the form has it, else above the button.
      const summary = found?.name
        ? t('Please check {label}.', { label: fieldLabelOf(fields, found.name) })
        : found?.text;
      setError(found ? { explanation: summary, retryable: false } : err);
      if (found?.name) form.elements.namedItem(found.name)?.focus?.();
    } finally {
      setBusy(false);
    }
  }
  return html`<form class=${className ?? 'form'} onSubmit=${submit}>
    ${fields.map((f) => html`<${Field} key=${f.name} spec=${f} error=${problem?.name === f.name ? problem.text : null} />`)}
    ${children}
    <${ErrorMessage} error=${error} />
    <div class="actions"><button type="submit" disabled=${busy}>${busy ? t('Working…') : t(submitLabel)}</button></div>
  </form>`;
}

/**
 * A button that opens a modal dialog: an optional form, an optional confirmation text (for
 * changes of money or access), and what the action answered when `showResult` renders it.
 */
/** "Reset MAC" inside a sentence: "reset MAC" (an acronym keeps its capitals). */
const sentenceCase = (text) => (/^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : text);

export function ActionDialog({
  label: english,
  title,
  fields = [],
  confirm,
  danger,
  submitLabel,
  run,
  onDone,
  showResult,
}) {
  const label = t(english);
  const ref = useRef(null);
  const [open, setOpen] = useState(false);
  const [result, setResult] = useState(null);
  useEffect(() => {
    if (open && ref.current && !ref.current.open) ref.current.showModal();
  }, [open]);
  const close = () => {
    ref.current?.close();
    setOpen(false);
    setResult(null);
  };
  async function submit(values) {
    const res = await run(values);
    if (showResult) setResult(res);
    else {
      close();
      onDone?.(res);
    }
  }
  return html`<span class="action">
    <button type="button" class=${danger ? 'danger' : ''} onClick=${() => setOpen(true)}>${label}</button>
    ${
      open &&
      html`<dialog ref=${ref} aria-labelledby="dialog-title" onClose=${() => {
        setOpen(false);
        setResult(null);
      }}>
      <h2 id="dialog-title">${title ? t(title) : label}</h2>
      ${confirm && html`<p class=${danger ? 'warning' : ''}>${typeof confirm === 'string' ? t(confirm) : confirm}</p>`}
      ${
        result
          ? html`${showResult(result)}<div class="actions"><button type="button" onClick=${() => {
              close();
              onDone?.(result);
            }}>${t('Close')}</button></div>`
          : html`<${Form} fields=${fields} submitLabel=${submitLabel ?? (confirm ? t('Yes, {action}', { action: sentenceCase(label) }) : label)} onSubmit=${submit}>
            <button type="button" class="secondary" onClick=${close}>${t('Cancel')}</button>
          </${Form}>`
      }
    </dialog>`
    }
  </span>`;
}

/**
 * The console's own confirmation (never the browser's `confirm()`, which the page's language and
 * look do not reach): `const [dialog, ask] = useConfirm()`; render `dialog`, then
 * `if (!(await ask({ title, text, action, danger }))) return;`.
 */
export function useConfirm() {
  const ref = useRef(null);
  const [question, setQuestion] = useState(null);
  useEffect(() => {
    if (question && ref.current && !ref.current.open) ref.current.showModal();
  }, [question]);
  const ask = useCallback((q) => new Promise((resolve) => setQuestion({ ...q, resolve })), []);
  const answer = (yes) => {
    if (!question) return;
    question.resolve(yes);
    setQuestion(null);
    ref.current?.close();
  };
  const dialog =
    question &&
    html`<dialog ref=${ref} aria-labelledby="confirm-title" onCancel=${() => answer(false)}>
      <h2 id="confirm-title">${question.title}</h2>
      <p class=${question.danger ? 'warning' : ''}>${question.text}</p>
      <div class="actions">
        <button type="button" class=${question.danger ? 'danger' : ''} onClick=${() => answer(true)}>${question.action}</button>
        <button type="button" class="secondary" onClick=${() => answer(false)}>${t('Cancel')}</button>
      </div>
    </dialog>`;
  return [dialog, ask];
}

// ---- tables, paging, details ------------------------------------------------------------------

export function Pager({ pagination, onPage }) {
  if (!pagination) return null;
  const { page, limit, total } = pagination;
  const pages = Math.max(1, Math.ceil(total / limit));
  const estimated = total > 10000;
  const where = estimated
    ? 'Page {page} of about {pages} (about {total} rows)'
    : 'Page {page} of {pages} ({total} rows)';
  return html`<nav class="pager" aria-label=${t('Pages')}>
    <button type="button" disabled=${page <= 1} onClick=${() => onPage(page - 1)}>${t('Previous')}</button>
    <span>${t(where, { page, pages, total })}</span>
    <button type="button" disabled=${page >= pages} onClick=${() => onPage(page + 1)}>${t('Next')}</button>
  </nav>`;
}

function show(value) {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? t('yes') : t('no');
  if (typeof value === 'object') return 'props' in value ? value : JSON.stringify(value);
  // Dates the API sends as text read as dates (format.js), never as raw ISO text.
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(value)) return dateTime(value);
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return date(value);
  return String(value);
}

/** Any object as a definition list (for answers whose shape this console does not fix). */
export function KeyValues({ data, keys }) {
  const entries = (keys ?? Object.keys(data ?? {})).map((k) => [k, data?.[k]]);
  return html`<dl class="kv">${entries.map(([k, v]) => html`<dt>${fieldLabel(k)}</dt><dd>${show(v)}</dd>`)}</dl>`;
}

/** Rows of objects as a table; columns `[key, title, render?]`, by default every key of the first row. */
export function Table({ rows, columns, caption, empty = 'Nothing here yet.' }) {
  if (!rows?.length) return html`<p class="muted">${t(empty)}</p>`;
  const cols = columns ?? Object.keys(rows[0]).map((k) => [k, fieldLabel(k)]);
  return html`<div class="table-wrap"><table>
    ${caption && html`<caption>${t(caption)}</caption>`}
    <thead><tr>${cols.map(([, title]) => html`<th scope="col">${typeof title === 'string' ? t(title) : title}</th>`)}</tr></thead>
    <tbody>${rows.map((r, i) => html`<tr key=${r.id ?? i}>${cols.map(([k, , render]) => html`<td>${render ? render(r) : show(r[k])}</td>`)}</tr>`)}</tbody>
  </table></div>`;
}
