import type { ServiceSchema } from 'moleculer';
import { nasService } from './nas.service';

/** Everything that talks to routers; for now the access-server registry (FreeRADIUS `nas`). */
export const networkAccessSchemas: ServiceSchema[] = [nasService];
