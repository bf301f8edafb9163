import type { ServiceSchema } from 'moleculer';
import { webhookDeliveryService } from './delivery.service';
import { createWebhooksService } from './webhooks.service';

/** Outgoing webhooks (issue 28, docs/webhooks.md): the API and the delivery worker. Runs in the notifier unit. */
export const webhooksSchemas: ServiceSchema[] = [createWebhooksService(), webhookDeliveryService];
