-- An invoice as the API shows it in lists (spec 2.2, without items, payments or link), kept in the
-- row (docs/billing.md, "Each invoice's JSON kept in its row"): building 50 rows' JSON was a third
-- of a computed page's PostgreSQL time (350 of 750 us for a tree's page 100 at a million invoices),
-- and every list, the detail and the writes' answers read it from here. A stored generated column is
-- recomputed by PostgreSQL on every insert and update of the row, in the writing statement, so it
-- cannot lag a payment or a status change. This function and its row type are the one definition
-- of the shape (the type's attribute names are the keys, in the spec's order): changing it means a
-- migration that replaces them and drops and adds the column (CREATE OR REPLACE alone would leave
-- stored values as they were).
--
-- Money: minor units over the currency's divisor as float8, exactly as `fromMinor` gives them (see
-- invoice-json.ts `major`); the exceptions are shared/money.ts's EXPONENT_EXCEPTIONS, which
-- test/integration/invoice-json.test.ts checks against this function for every currency.
-- PL/pgSQL, not SQL: a generated column's function must be IMMUTABLE, and an IMMUTABLE SQL function
-- calling STABLE ones (row_to_json, to_char) is never inlined, so PostgreSQL planned its body again
-- in every writing statement (about 290 us more per one-row insert, 22 us a row in a batch);
-- PL/pgSQL keeps its plans for the session (about 80 us more per one-row insert). Declared IMMUTABLE
-- although row_to_json and to_char are STABLE: what they read of the session is fixed here
-- (timestamps formatted in UTC by to_char; JSON prints dates as ISO whatever DateStyle; float8
-- printed shortest-exact by the function's own extra_float_digits, whatever the writer's session
-- says: at 0 or below a row written by psql stored 1e+03 for 1234.57). Its own search_path, this
-- migration's, finds the row type whatever the writer's: pg_restore and logical replication's apply
-- worker compute generated columns with an empty search_path, and a restore failed on every invoice.
-- PostgreSQL records no dependency of a PL/pgSQL body on the type: drop or rename it only with them.
CREATE TYPE "invoice_api_fields" AS (id int, invoice_number text, subscriber_id int, reseller_id int, kind text,
  amount float8, tax_rate numeric, tax_amount float8, total float8, paid_amount float8, balance float8, status text,
  currency char(3), issue_date date, due_date date, paid_at text, notes text, commission_rate numeric,
  commission_amount float8, consolidated_into int, created_by int, created_at text);--> statement-breakpoint
CREATE FUNCTION "invoice_api_json"(id int, invoice_number text, subscriber_id int, reseller_id int, kind text,
  amount bigint, tax_rate numeric, tax_amount bigint, total bigint, paid_amount bigint, status text, currency char(3),
  issue_date date, due_date date, paid_at timestamptz, notes text, commission_rate numeric, commission_amount bigint,
  consolidated_into int, created_by int, created_at timestamptz) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
  SET extra_float_digits = 1 SET search_path FROM CURRENT AS $$
DECLARE
  d float8 := CASE
    WHEN currency IN ('BIF', 'CLP', 'DJF', 'GNF', 'ISK', 'JPY', 'KMF', 'KRW', 'PYG', 'RWF', 'UGX', 'UYI', 'VND', 'VUV', 'XAF', 'XOF', 'XPF') THEN 1
    WHEN currency IN ('BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND') THEN 1000
    WHEN currency IN ('CLF', 'UYW') THEN 10000
    ELSE 100 END;
BEGIN
  RETURN row_to_json(ROW(id, invoice_number, subscriber_id, reseller_id, kind, amount / d, trim_scale(tax_rate),
    tax_amount / d, total / d, paid_amount / d, (total - paid_amount) / d, status, currency, issue_date, due_date,
    to_char(paid_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), notes, trim_scale(commission_rate),
    commission_amount / d, consolidated_into, created_by,
    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))::invoice_api_fields)::text;
END $$;--> statement-breakpoint
ALTER TABLE "invoices" ADD COLUMN "api_json" text GENERATED ALWAYS AS (invoice_api_json(id, invoice_number,
  subscriber_id, reseller_id, kind, amount, tax_rate, tax_amount, total, paid_amount, status, currency, issue_date,
  due_date, paid_at, notes, commission_rate, commission_amount, consolidated_into, created_by, created_at)) STORED;
