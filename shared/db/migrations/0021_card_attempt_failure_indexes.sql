DROP INDEX "card_redeem_attempts_subscriber_idx";--> statement-breakpoint
DROP INDEX "card_redeem_attempts_address_idx";--> statement-breakpoint
CREATE INDEX "card_redeem_attempts_subscriber_idx" ON "card_redeem_attempts" USING btree ("subscriber_id","created_at") WHERE not "card_redeem_attempts"."ok" and "card_redeem_attempts"."cleared_at" is null;--> statement-breakpoint
CREATE INDEX "card_redeem_attempts_address_idx" ON "card_redeem_attempts" USING btree ("address","created_at") WHERE not "card_redeem_attempts"."ok" and "card_redeem_attempts"."cleared_at" is null;