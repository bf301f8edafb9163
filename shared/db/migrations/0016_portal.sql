-- The captive portal (docs/walled-garden.md) finds the subscriber behind a client address: the open
-- accounting session whose framed address it is. Partial, like radacct_active_session_idx: open
-- sessions are a small share of radacct, so the index stays small and the lookup is one probe.
CREATE INDEX "radacct_open_framedip_idx" ON "radacct" USING btree ("framedipaddress") WHERE "radacct"."acctstoptime" is null;
