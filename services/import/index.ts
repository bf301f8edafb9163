import type { ServiceSchema } from 'moleculer';
import { importService } from './import.service';

/** `/api/imports` (issue 29): imports from daloRADIUS, phpnuxbill and CSV as admin jobs. Runs in the subscribers unit. */
export const importSchemas: ServiceSchema[] = [importService];
