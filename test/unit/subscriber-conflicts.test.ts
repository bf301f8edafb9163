/**
 * uniqueConflict (services/subscribers/conflicts.ts): the 409 a create or update answers when a
 * concurrent writer won an index, chosen by the constraint the violation names, and any other
 * violation left as the error it is.
 */
import { uniqueConflict } from '../../services/subscribers/conflicts';
import { ApiError } from '../../shared/errors';

/** A violation as Drizzle throws it: PostgreSQL's error in `cause`. */
function violation(code: string, constraint: string): Error {
  const pg = Object.assign(new Error(`violates constraint "${constraint}"`), { code, constraint });
  return Object.assign(new Error('Failed query'), { cause: pg });
}

function answer(err: Error): unknown {
  try {
    uniqueConflict(err);
  } catch (thrown) {
    return thrown;
  }
}

describe('uniqueConflict', () => {
  it("answers each subscriber index's own 409", () => {
    const cases: [Error, string][] = [
      [violation('23505', 'subscribers_username_live_uq'), 'username already exists'],
      [violation('23505', 'subscribers_static_ip_live_uq'), 'static_ip already used'],
      [
        violation('23P01', 'subscribers_delegated_ipv6_prefix_no_overlap'),
        'delegated_ipv6_prefix overlaps a prefix, already used by another subscriber',
      ],
      [
        violation('23P01', 'subscribers_ipv6_prefix_no_overlap'),
        'ipv6_prefix overlaps a prefix, already used by another subscriber',
      ],
    ];
    for (const [err, message] of cases) {
      const thrown = answer(err);
      expect(thrown).toBeInstanceOf(ApiError);
      expect([(thrown as ApiError).code, (thrown as ApiError).message]).toEqual([409, message]);
    }
  });

  it('rethrows a violation of any other index as it is, never as a username taken', () => {
    const holder = violation('23505', 'ipv6_pool_assignments_holder_uq');
    expect(answer(holder)).toBe(holder);
  });
});
