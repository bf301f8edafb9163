/** Request schemas of the access-server routes (nas.service.ts). */
import { object, type Infer } from '../../shared/http/schemas';
import { VENDORS } from '../../shared/vendors/profiles';

export const nasFields = {
  name: { type: 'string', minLength: 1, maxLength: 64 },
  ip_address: { type: 'string', format: 'ipv4' },
  secret: { type: 'string', minLength: 6, maxLength: 128 },
  coa_port: { type: 'integer', minimum: 1, maximum: 65535 },
  type: { type: 'string', enum: ['mikrotik', 'other'] },
  /** Vendor profile: the attributes its sessions get from FreeRADIUS and in CoA (docs/network-access.md). */
  vendor: { type: 'string', enum: [...VENDORS] },
  api_port: { type: ['integer', 'null'], minimum: 1, maximum: 65535 },
  api_username: { type: ['string', 'null'], maxLength: 64 },
  api_password: { type: ['string', 'null'], maxLength: 128 },
  description: { type: ['string', 'null'], maxLength: 500 },
} as const;

export const nasCreateBody = object(nasFields, ['name', 'ip_address', 'secret']);
export const nasUpdateBody = { ...object(nasFields), minProperties: 1 };
export type NasInput = Infer<typeof nasUpdateBody>;
