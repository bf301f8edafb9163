import type { ServiceSchema } from 'moleculer';
import { createGatewayService } from './gateway.service';

export const gatewaySchemas = (): ServiceSchema[] => [createGatewayService()];
