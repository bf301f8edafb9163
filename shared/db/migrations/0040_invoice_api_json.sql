-- An invoice as the API shows it in lists (spec 2.2, without items, payments or link), kept in the
-- row (docs/billing.md, "Each invoice's JSON kept in its row"): building 50 rows' JSON was a third
-- of a computed page's PostgreSQL time (350 of 750 us for a tree's page 100 at a million invoices),
-- and every list, the detail and the writes' answers read it from here. A stored generated column is
-- recomputed by PostgreSQL on every insert and update of the row, in the writing statement, so it
-- cannot lag a payment or a status change. This function is the one definition of the shape:
-- changing it means a migration that replaces it and drops and adds the column (CREATE OR REPLACE
-- alone would leave stored values as they were).
--
-- Money: minor units over the currency's divisor as float8, exactly as `fromMinor` gives them (see
-- invoice-json.ts `major`); the exceptions are shared/money.ts's EXPONENT_EXCEPTIONS, which
-- test/integration/invoice-api-json.test.ts checks against this function for every currency.
-- Declared IMMUTABLE (a generated column requires it) although row_to_json and to_char are STABLE:
-- what they depend on is fixed here (timestamps are formatted in UTC by to_char; JSON prints dates
-- as ISO whatever DateStyle; float8 prints shortest-exact at any positive extra_float_digits, the
-- default, and amounts below 10^13 print the same even at 0).
CREATE FUNCTION "invoice_api_json"(id int, invoice_number text, subscriber_id int, reseller_id int, kind text,
  amount bigint, tax_rate numeric, tax_amount bigint, total bigint, paid_amount bigint, status text, currency char(3),
  issue_date date, due_date date, paid_at timestamptz, notes text, commission_rate numeric, commission_amount bigint,
  consolidated_into int, created_by int, created_at timestamptz) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  select row_to_json(v)::text from (select id, invoice_number, subscriber_id, reseller_id, kind,
      amount::float8 / d as amount, trim_scale(tax_rate) as tax_rate, tax_amount::float8 / d as tax_amount,
      total::float8 / d as total, paid_amount::float8 / d as paid_amount, (total - paid_amount)::float8 / d as balance,
      status, currency, issue_date, due_date, to_char(paid_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as paid_at,
      notes, trim_scale(commission_rate) as commission_rate, commission_amount::float8 / d as commission_amount,
      consolidated_into, created_by, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at
    from (select (case
      when currency in ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') then 1
      when currency in ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') then 1000
      when currency in ('CLF', 'UYW') then 10000
      else 100 end)::float8 as d) cur) v
$$;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "api_json" text GENERATED ALWAYS AS (invoice_api_json(id, invoice_number,
  subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total, paid_amount, status, currency, issue_date,
  due_date, paid_at, notes, commission_rate, commission_amount, consolidated_into, created_by, created_at)) STORED;
