import type { ServiceSchema } from 'moleculer';
import { bandwidthRulesService } from './bandwidth-rules.service';
import { subscriberBulkService } from './bulk.service';
import { lifecycleService } from './lifecycle/lifecycle.service';
import { notificationsService } from './notifications.service';
import { subscribersService } from './subscribers.service';

/**
 * `/api/subscribers`: records, single and bulk actions, bandwidth rules; the lifecycle sweep and
 * the notifications it records (`/api/notifications`).
 */
export const subscribersSchemas: ServiceSchema[] = [
  subscribersService,
  subscriberBulkService,
  bandwidthRulesService,
  lifecycleService,
  notificationsService,
];
