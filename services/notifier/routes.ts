import type { RouteDef } from '../../shared/http/route';

export const routes: RouteDef[] = [];
