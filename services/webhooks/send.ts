/**
 * One POST of a delivery under the address policy (shared/net/address-policy.ts): the URL checked
 * again at sending time (a setting changed since it was stored) and every address the name resolves
 * to checked at connect time, so a name cannot rebind to a private address between the two. Bounded:
 * the body sent, the answer read (the rest dropped), the whole exchange's time; no redirect followed.
 * Of the answer the log keeps its status and at most a short text excerpt (./answer-excerpt.ts).
 */
import http from 'node:http';
import https from 'node:https';
import { checkOutgoingUrl, guardedLookup, isPrivateAddress } from '../../shared/net/address-policy';
import { answerExcerpt } from './answer-excerpt';

export interface SendOutcome {
  statusCode: number | null;
  error: string | null;
  responseBody: string | null;
  durationMs: number;
}

export interface SendRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  allowPrivate: boolean;
  timeoutMs: number;
  maxBodyBytes: number;
}

export async function send(r: SendRequest): Promise<SendOutcome> {
  const started = Date.now();
  const done = (statusCode: number | null, error: string | null, responseBody: string | null): SendOutcome => ({
    statusCode,
    error,
    responseBody,
    durationMs: Date.now() - started,
  });
  if (Buffer.byteLength(r.body) > r.maxBodyBytes) return done(null, `body larger than ${r.maxBodyBytes} bytes`, null);
  let url: URL;
  try {
    url = await checkOutgoingUrl('url', r.url, r.allowPrivate);
  } catch (err) {
    return done(null, (err as Error).message, null);
  }
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (o: SendOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = request(
      url,
      {
        method: 'POST',
        lookup: guardedLookup(r.allowPrivate),
        headers: { ...r.headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(r.body) },
      },
      (res) => {
        // The address actually connected to: private only when allow_private_targets let it through.
        const privateTarget = isPrivateAddress(res.socket?.remoteAddress ?? '');
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          // Only the start is kept; reading stops at the bound so a huge answer costs nothing more.
          size += chunk.length;
          if (size <= r.maxBodyBytes) parts.push(chunk);
          else res.destroy();
        });
        const answered = () =>
          finish(
            done(
              res.statusCode ?? null,
              null,
              answerExcerpt({ contentType: res.headers['content-type'], body: Buffer.concat(parts), privateTarget }),
            ),
          );
        res.on('end', answered);
        res.on('close', answered);
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      finish(done(null, `no answer within ${r.timeoutMs} ms`, null));
    }, r.timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish(
        done(
          null,
          err.code === 'EADDRNOTALLOWED' ? 'a loopback, private or reserved address' : (err.code ?? err.message),
          null,
        ),
      ),
    );
    req.end(r.body);
  });
}
