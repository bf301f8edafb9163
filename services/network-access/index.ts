import type { ServiceSchema } from 'moleculer';
import { ipv6PoolsService } from './ipv6-pools.service';
import { nasService } from './nas.service';
import { networkAccessService } from './network-access.service';
import { outboxRelayService } from './relay.service';
import { sessionsService } from './sessions.service';
import { createUsageService } from './usage/usage.service';

/**
 * Everything that talks to routers: the access-server registry (FreeRADIUS `nas`), CoA and the
 * router API on subscribers' sessions, the outbox relay that feeds it events, usage and fair use,
 * and the session lists (live, and a subscriber's closed ones).
 */
export const networkAccessSchemas: ServiceSchema[] = [
  nasService,
  ipv6PoolsService,
  networkAccessService,
  outboxRelayService,
  sessionsService,
  createUsageService(),
];
