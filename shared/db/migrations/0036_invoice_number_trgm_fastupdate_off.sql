-- Invoice lists (issue 26): the number search reads invoices_number_trgm on every request. With
-- GIN's fast update, each new invoice's trigrams wait in the index's pending list, which every scan
-- reads whole, until a vacuum (an insert-only invoices table gets one after 20% new rows) or the
-- 4 MB limit flushes it: 4,000 new invoices took a 10-match number search from 0.4 to 2 ms of
-- PostgreSQL time at a million invoices. Without it an insert writes its trigrams into the index at
-- once (about 45 us more PostgreSQL CPU per single-row insert, which no longer leaves the flush to
-- a later writer or vacuum).
ALTER INDEX "invoices_number_trgm" SET (fastupdate = off);--> statement-breakpoint
SELECT gin_clean_pending_list('invoices_number_trgm'::regclass);
