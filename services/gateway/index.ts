import type { ServiceSchema } from 'moleculer';
import { createConsoleService } from './console.service';
import { createGatewayService } from './gateway.service';
import { createMyPageService } from './my-page.service';

export const gatewaySchemas = (): ServiceSchema[] => [
  createGatewayService(),
  createConsoleService(),
  createMyPageService(),
];
