/** Request schemas of the manager routes. */
import { freshCodeProperty, idSchema, object, type Infer } from '../../shared/http/schemas';
import { ROLES } from '../../shared/auth/claims';

const permissionList = {
  type: 'array',
  items: { type: 'string', pattern: '^[a-z_]+\\.[a-z_]+$' },
  maxItems: 100,
} as const;

export const managerFields = {
  username: { type: 'string', minLength: 3, maxLength: 64, pattern: '^[A-Za-z0-9_.@-]+$' },
  password: { type: 'string', minLength: 8, maxLength: 200 },
  role: { type: 'string', enum: [...ROLES] },
  reseller_id: { ...idSchema, type: ['integer', 'null'] },
  permissions: permissionList,
  active: { type: 'boolean' },
} as const;

/** Not a field of the manager: the caller's proof for a change that grants admin sign-in. */
const freshCode = {
  two_factor_code: freshCodeProperty("to create or promote an admin or set an admin's password"),
} as const;

export const managerCreateBody = object({ ...managerFields, ...freshCode }, ['username', 'password', 'role']);
export const managerUpdateBody = { ...object({ ...managerFields, ...freshCode }), minProperties: 1 };
export type ManagerInput = Infer<typeof managerUpdateBody>;
export type NewManagerInput = Infer<typeof managerCreateBody>;
