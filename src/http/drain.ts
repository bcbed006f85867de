// Graceful stop of the HTTP server (app.close()): stop accepting connections, let in-flight
// requests finish, close every connection as soon as it is idle (a keep-alive connection must
// not hold the process for its timeout), and answer any request that still arrives on an open
// connection with 503 + `Connection: close` (`/readyz` included: a load balancer stops routing
// here). After `graceMs`, connections still busy are cut.
import type http from 'node:http';
import type { Logger } from 'pino';
import { REQUEST_ID_HEADER, requestIdFrom } from './observability.ts';

const SHUTTING_DOWN = JSON.stringify({ error: { code: 503, message: 'The server is shutting down; retry shortly (or on another instance)' } });

export async function drainHttpServer(server: http.Server, opts: { graceMs: number; log?: Logger }): Promise<void> {
  // Requests dispatched before this point keep their handler; later ones get the refusal.
  server.removeAllListeners('request');
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.shouldKeepAlive = false;
    const body = req.url === '/readyz' ? JSON.stringify({ status: 'shutting down' }) : SHUTTING_DOWN;
    res.setHeader(REQUEST_ID_HEADER, requestIdFrom(req.headers['x-request-id']));
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', connection: 'close', 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
  });
  if (!server.listening) {
    server.closeAllConnections();
    return;
  }
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // A connection whose request finishes during the drain becomes idle: close it then, not after
  // the keep-alive timeout.
  const sweep = setInterval(() => server.closeIdleConnections(), 25);
  const cut = setTimeout(() => {
    opts.log?.warn({ graceMs: opts.graceMs }, 'requests still running after the shutdown grace period: closing their connections');
    server.closeAllConnections();
  }, opts.graceMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
