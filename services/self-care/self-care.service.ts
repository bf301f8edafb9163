/**
 * Self-care (issue 40, docs/self-care.md): the subscriber's own door at /api/my. Sign-in with the
 * PPPoE password or a one-time code; reads scoped to exactly the signed-in subscriber; writes
 * through the operators' own actions, run for that subscriber with the subscriber as actor.
 */
import type { ServiceSchema } from 'moleculer';
import { forgetCachedSettings } from '../../shared/settings';
import { accountActions } from './account.actions';
import { changeActions } from './changes.actions';
import { signInActions } from './sign-in.actions';

export const selfCareService: ServiceSchema = {
  name: 'self-care',
  actions: { ...signInActions, ...accountActions, ...changeActions },
  events: {
    // A change made through another process: its own settings service forgot them there.
    'settings.changed'() {
      forgetCachedSettings();
    },
  },
};
