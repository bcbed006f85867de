// Cross-origin access (CORS), decided here for every route: /graphql, /v1, /files, the probes.
// Yoga's own CORS is off (`cors: false` in server.ts) so there is one policy, one place.
//
// - `CORS_ORIGINS` unset: no cross-origin access at all (no Access-Control-* header is ever sent;
//   same-origin pages and non-browser clients are unaffected).
// - `CORS_ORIGINS=*`: any origin may call, never with credentials (`Access-Control-Allow-Origin: *`).
//   Bearer tokens travel in `Authorization`, which a page sets itself: no cookie is needed.
// - `CORS_ORIGINS=https://a.example,https://b.example`: the request's origin is reflected when it is
//   listed (`Vary: Origin` on every response, since the answer depends on it); credentials are
//   allowed only with `CORS_CREDENTIALS=true`.
//
// A preflight (OPTIONS with `Origin` and `Access-Control-Request-Method`) is answered 204 here,
// for any path: the browser then sends the real request and the page can read its 404 or 405. A
// preflight from an origin not allowed is also a 204, without any Access-Control-Allow-* header:
// the browser refuses the call and its console names the missing header (docs/decisions.md).
import type http from 'node:http';
import type { Config } from '../config.ts';
import { appendVary } from './compression.ts';

/** Methods a cross-origin page may use (the same on every path: the route answers 404/405 itself). */
export const CORS_ALLOW_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE';
/** Request headers a cross-origin page may send besides the CORS-safelisted ones. */
export const CORS_ALLOW_HEADERS = 'Authorization, Content-Type, Accept, X-Request-Id, If-None-Match, If-Match, If-Modified-Since, X-Visitor-Token, Idempotency-Key, X-Docgraph-Lsn';
/**
 * Response headers a cross-origin page may read besides the CORS-safelisted ones (WWW-Authenticate:
 * so a page tells "no token" from "this token stopped working", `error="invalid_token"`).
 */
export const CORS_EXPOSE_HEADERS = 'X-Request-Id, ETag, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Location, WWW-Authenticate, Idempotent-Replayed, X-Docgraph-Lsn';
/** How long a browser may reuse a preflight answer, seconds (Chrome caps it at 2 hours). */
export const CORS_MAX_AGE = 600;

export type Cors = {
  /**
   * Set the CORS headers of the response to `req` (call before anything is written). Returns
   * true when `req` is a preflight, which has then been answered (204).
   */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean;
};

export function createCors(config: Config['cors']): Cors {
  const anyOrigin = config.origins === '*';
  const listed = new Set(anyOrigin ? [] : config.origins);
  const enabled = anyOrigin || listed.size > 0;
  const credentials = !anyOrigin && config.credentials;

  return {
    handle(req, res) {
      const origin = req.headers.origin;
      const preflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
      if (enabled) {
        // With a list, every answer depends on Origin (even one without the header, which a cache
        // could otherwise hand to a listed origin): say so.
        if (!anyOrigin) appendVary(res, 'Origin');
        const allowed = origin !== undefined && (anyOrigin || listed.has(origin));
        if (allowed) {
          res.setHeader('Access-Control-Allow-Origin', anyOrigin ? '*' : origin);
          if (credentials) res.setHeader('Access-Control-Allow-Credentials', 'true');
          if (preflight) {
            res.setHeader('Access-Control-Allow-Methods', CORS_ALLOW_METHODS);
            res.setHeader('Access-Control-Allow-Headers', CORS_ALLOW_HEADERS);
            res.setHeader('Access-Control-Max-Age', String(CORS_MAX_AGE));
          } else {
            res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSE_HEADERS);
          }
        }
      }
      if (!preflight) return false;
      res.statusCode = 204;
      res.setHeader('Content-Length', '0');
      res.end();
      return true;
    },
  };
}
