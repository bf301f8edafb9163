import type { ServiceSchema } from 'moleculer';
import { authService } from './auth.service';
import { ensureFirstAdmin, managersService } from './managers.service';
import { plansService } from './plans.service';
import { resellersService } from './resellers.service';
import { settingsService } from './settings.service';
import { bandwidthRulesService } from './bandwidth-rules.service';
import { subscriberBulkService } from './bulk.service';
import { subscribersService } from './subscribers.service';

/** Subscribers and the reference data around them: identity, resellers, plans, settings. */
export const subscribersSchemas: ServiceSchema[] = [
  authService,
  { ...managersService, async started() { await ensureFirstAdmin((m) => this.logger.info(m)); } },
  resellersService,
  plansService,
  settingsService,
  subscribersService,
  subscriberBulkService,
  bandwidthRulesService,
];
