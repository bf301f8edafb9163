import type { ServiceSchema } from 'moleculer';
import { backupsService } from './backups.service';

/** Scheduled backups and `GET /api/backups` (docs/operations.md). Runs in the subscribers unit. */
export const backupsSchemas: ServiceSchema[] = [backupsService];
