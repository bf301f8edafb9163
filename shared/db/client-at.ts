import { Client } from 'pg';

/** Runs `fn` on a connection of its own to `url`, closed after it (a start's one-off work). */
export async function withClientAt<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}
