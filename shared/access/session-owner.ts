/**
 * Whose sessions are whose. radacct keeps sessions by username, and a deleted subscriber's name may
 * be taken again (usernames are unique among live subscribers only): the sessions under a name that
 * started before its holder's `username_since` are an earlier holder's, and are never shown as its
 * own (its session history, self-care's last sessions, the live list's owner).
 */
import { sql, type SQL } from 'drizzle-orm';

/**
 * `username_since` for a subscriber taking `username`: now, when radacct already holds sessions
 * under the name (they cannot be its own), else null.
 */
export function nameTakenSince(username: SQL | string): SQL {
  return sql`(select now() where exists (select 1 from radacct where username = ${username}))`;
}

/** SQL text: radacct row `r`'s session is subscriber `s`'s own (its name holds it since the session started). */
export function ownSessionSql(r: string, s: string): string {
  return `(${s}.username_since is null or ${r}.acctstarttime >= ${s}.username_since)`;
}

/** A live subscriber as the owner of the sessions under its name. */
export interface NameHolder {
  username: string;
  usernameSince: Date | null;
}
