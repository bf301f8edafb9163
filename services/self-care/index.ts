import type { ServiceSchema } from 'moleculer';
import { selfCareService } from './self-care.service';

/** The subscriber's self-care API (/api/my) and its sign-in. */
export const selfCareSchemas: ServiceSchema[] = [selfCareService];
