/** Request schemas of the access-server routes (nas.service.ts). */

export const nasFields = {
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

