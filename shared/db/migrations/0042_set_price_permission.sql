-- A subscriber's own price (price, override_price) now needs subscribers.set_price on top of
-- subscribers.edit (issue 43). A reseller account that could set prices with subscribers.edit keeps
-- that; staff accounts and restricted API keys do not, until the operator grants it.
UPDATE "managers"
   SET "permissions" = "permissions" || '["subscribers.set_price"]'::jsonb
 WHERE "role" = 'reseller'
   AND "permissions" ? 'subscribers.edit'
   AND NOT "permissions" ? 'subscribers.set_price';
