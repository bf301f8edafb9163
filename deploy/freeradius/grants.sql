-- Least privilege for FreeRADIUS on the billing database: a role that reads its tables and writes
-- accounting and the post-auth log, nothing else. Create the role, then run this as the owner of
-- the tables (the role the billing migrates with), e.g.:
--   psql "$DATABASE_URL" -c "create role freeradius login password '...'" -f deploy/freeradius/grants.sql
-- The database functions FreeRADIUS's writes reach (the radacct triggers that keep is_online,
-- ip_address and usage; radius_bind_mac for MAC binding) run with their owner's rights.
GRANT SELECT ON radcheck, radreply, radgroupcheck, radgroupreply, radusergroup, nas TO freeradius;
-- The clients with their vendor as nas_type (migration 0046).
GRANT SELECT ON radius_clients TO freeradius;
GRANT SELECT, INSERT, UPDATE ON radacct TO freeradius;
-- The radacct update trigger appends each packet's octets here, with FreeRADIUS's rights (migration 0032).
GRANT INSERT ON usage_deltas TO freeradius;
-- ... and moves the session's counted totals in usage_seen (migration 0037).
GRANT SELECT, INSERT, DELETE ON usage_seen TO freeradius;
-- ... and raises the access server's last packet time in nas_last_packet (migration 0054).
GRANT SELECT, INSERT, UPDATE ON nas_last_packet TO freeradius;
GRANT INSERT ON radpostauth TO freeradius;
GRANT USAGE ON SEQUENCE radacct_radacctid_seq, radpostauth_id_seq TO freeradius;
