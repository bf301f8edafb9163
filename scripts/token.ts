/**
 * `npm run token -- [--role admin|reseller|user] [--reseller 3] [--manager 1] [--perm a.b,c.d] [--ttl 3600]`
 * prints a development JWT signed with JWT_SECRET.
 */
import { parseArgs } from 'node:util';
import { ROLES, type Role } from '../shared/auth/claims';
import { signToken } from '../shared/auth/jwt';

const { values } = parseArgs({
  options: {
    role: { type: 'string', default: 'admin' },
    reseller: { type: 'string' },
    manager: { type: 'string', default: '1' },
    perm: { type: 'string', default: '' },
    ttl: { type: 'string', default: '3600' },
  },
});
const secret = process.env.JWT_SECRET;
if (!secret) {
  console.error('JWT_SECRET is not set');
  process.exit(2);
}
if (!(ROLES as readonly string[]).includes(values.role!)) {
  console.error(`--role must be one of ${ROLES.join(', ')}`);
  process.exit(2);
}
const { token } = signToken(
  {
    managerId: Number(values.manager),
    role: values.role as Role,
    resellerId: values.reseller ? Number(values.reseller) : null,
    permissions: values.perm ? values.perm.split(',') : [],
  },
  secret,
  Number(values.ttl),
);
console.log(token);
