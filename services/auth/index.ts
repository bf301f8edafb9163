import type { ServiceSchema } from 'moleculer';
import { authService } from './auth.service';
import { twoFactorService } from './two-factor.service';

/** Sign-in (password, then a TOTP code when enabled) and two-factor enrolment, under /api/auth. */
export const authSchemas: ServiceSchema[] = [authService, twoFactorService];
