-- Invoice numbers are `<prefix>-<year>-<sequence>` with a prefix of [A-Z0-9] (the invoice_prefix
-- setting): this makes that alphabet a fact the invoice list can rely on. A search holding any
-- other character (a space in a full name, an `@` in a username) cannot match a number, so it
-- skips the number's trigram index (services/billing/invoice-list.ts, NUMBER_ALPHABET).
ALTER TABLE "invoices" ADD CONSTRAINT "invoices_number_chars" CHECK ("invoice_number" ~ '^[A-Za-z0-9-]+$');
