import type { RouteDef } from '../../shared/http/route';
import { idParams, object, paginationProperties } from '../../shared/http/schemas';

const nasFields = {
  name: { type: 'string', minLength: 1, maxLength: 64 },
  ip_address: { type: 'string', format: 'ipv4' },
  secret: { type: 'string', minLength: 6, maxLength: 128 },
  coa_port: { type: 'integer', minimum: 1, maximum: 65535 },
  type: { type: 'string', enum: ['mikrotik', 'other'] },
  api_port: { type: ['integer', 'null'], minimum: 1, maximum: 65535 },
  api_username: { type: ['string', 'null'], maxLength: 64 },
  api_password: { type: ['string', 'null'], maxLength: 128 },
  description: { type: ['string', 'null'], maxLength: 500 },
};
const adminOnly = { 403: 'Not an admin' };

export const routes: RouteDef[] = [
  {
    method: 'POST', path: '/api/nas', action: 'nas.create', auth: 'jwt', access: 'admin',
    summary: 'Register an access server (written to the FreeRADIUS nas table)', tag: 'nas', success: 201,
    body: object(nasFields, ['name', 'ip_address', 'secret']), errors: { ...adminOnly, 409: 'nas ip_address already exists' },
  },
  {
    method: 'GET', path: '/api/nas', action: 'nas.list', auth: 'jwt', access: 'admin',
    summary: 'List access servers (secrets never returned)', tag: 'nas', query: object(paginationProperties), errors: adminOnly,
  },
  {
    method: 'PUT', path: '/api/nas/:id', action: 'nas.update', auth: 'jwt', access: 'admin',
    summary: 'Update an access server', tag: 'nas', params: idParams(), body: { ...object(nasFields), minProperties: 1 },
    errors: { ...adminOnly, 404: 'nas not found', 409: 'nas ip_address already exists' },
  },
  {
    method: 'DELETE', path: '/api/nas/:id', action: 'nas.remove', auth: 'jwt', access: 'admin',
    summary: 'Remove an access server', tag: 'nas', params: idParams(), errors: { ...adminOnly, 404: 'nas not found' },
  },
];
