import type { ServiceSchema } from 'moleculer';
import { bandwidthRulesService } from './bandwidth-rules.service';
import { subscriberBulkService } from './bulk.service';
import { subscribersService } from './subscribers.service';

/** `/api/subscribers`: records, single and bulk actions, bandwidth rules. */
export const subscribersSchemas: ServiceSchema[] = [subscribersService, subscriberBulkService, bandwidthRulesService];
