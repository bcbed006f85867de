// SSRF guard for URLs the server fetches on a user's behalf (imports, link previews, OpenAPI specs…).
//
// Every hop (the URL and each redirect target) must be http(s) and resolve only to public unicast
// addresses, unless `allowPrivate` (tests, self-hosted setups). The check runs again inside the
// connection's own DNS lookup (an undici dispatcher), so a DNS server that answers differently
// the second time (DNS rebinding) cannot slip a private address through.
import dns from 'node:dns';
import ipaddr from 'ipaddr.js';
import { Agent } from 'undici';

export class FetchGuardError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FetchGuardError';
  }
}

export class FetchTimeoutError extends Error {
  constructor(message = 'The request timed out') {
    super(message);
    this.name = 'FetchTimeoutError';
  }
}

export class FetchTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`The response is larger than ${maxBytes} bytes`);
    this.name = 'FetchTooLargeError';
  }
}

export interface GuardOptions {
  /** Allow loopback, private, link-local… addresses (skips DNS checks entirely). */
  allowPrivate: boolean;
}

export interface SafeFetchOptions extends GuardOptions {
  /** For the whole exchange: DNS, every redirect hop and reading the body. Default 10 s. */
  timeoutMs?: number;
  /** Maximum body size in bytes (after content decoding). Default 10 MiB. */
  maxBytes?: number;
  /** Request headers; credentials are dropped when a redirect leaves the original origin. */
  headers?: Record<string, string>;
}

export interface SafeFetchResult {
  status: number;
  contentType: string | null;
  body: Buffer;
  /** The URL of the last hop (after redirects). */
  finalUrl: string;
  /** The body decoded as UTF-8 (computed on access). */
  readonly text: string;
}

export const MAX_REDIRECTS = 5;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

// IPv6 forms that carry an IPv4 address a packet really goes to (a NAT64 gateway, a 6to4 relay or
// the host's own IPv4 stack): the embedded address decides. Prefixes are ipaddr.js CIDRs.
const EMBEDDED_IPV4: Array<{ prefix: [ipaddr.IPv6, number]; bytes: [number, number] }> = [
  // IPv4-compatible (deprecated, RFC 4291): ::a.b.c.d. `::` and `::1` are caught first by their own ranges.
  { prefix: ipaddr.IPv6.parseCIDR('::/96'), bytes: [12, 16] },
  // NAT64 well-known prefix (RFC 6052): 64:ff9b::a.b.c.d.
  { prefix: ipaddr.IPv6.parseCIDR('64:ff9b::/96'), bytes: [12, 16] },
  // 6to4 (RFC 3056): 2002:AABB:CCDD::/48 routes through the IPv4 host AA.BB.CC.DD.
  { prefix: ipaddr.IPv6.parseCIDR('2002::/16'), bytes: [2, 6] },
];

/**
 * The address a connection to `address` really reaches, as ipaddr.js sees it: the embedded IPv4
 * address of IPv4-mapped (`::ffff:127.0.0.1`), IPv4-compatible (`::7f00:1`), NAT64
 * (`64:ff9b::7f00:1`) and 6to4 (`2002:7f00:1::`) addresses, the address itself otherwise.
 */
export function effectiveAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const ip = ipaddr.process(address);
  if (ip.kind() === 'ipv4') return ip;
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'unspecified' || range === 'loopback') return v6;
  for (const { prefix, bytes } of EMBEDDED_IPV4) {
    if (v6.match(prefix)) return ipaddr.fromByteArray(v6.toByteArray().slice(...bytes));
  }
  return v6;
}

/**
 * True only for globally routable unicast addresses. ipaddr.js names every special range
 * (loopback, private, linkLocal, uniqueLocal, multicast, unspecified, carrierGradeNat, reserved,
 * teredo, the local-use NAT64 prefix 64:ff9b:1::/48…), so anything but 'unicast' is refused.
 * IPv6 forms that embed an IPv4 address are judged by that address (`effectiveAddress`):
 * `64:ff9b::7f00:1` is loopback, `64:ff9b::808:808` is 8.8.8.8 and public.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return effectiveAddress(address).range() === 'unicast';
}

/** Check that `url` may be fetched; returns the parsed URL or throws FetchGuardError. */
export async function requireFetchableUrl(url: string, opts: GuardOptions): Promise<URL> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new FetchGuardError('Invalid URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new FetchGuardError(`Only http and https URLs can be fetched, not ${parsed.protocol}`);
  }
  if (parsed.username || parsed.password) throw new FetchGuardError('URLs with credentials cannot be fetched');
  if (opts.allowPrivate) return parsed;

  // IPv6 literals keep their brackets in `hostname`; the URL parser already normalized IPv4 forms
  // such as `2130706433` or `0x7f.1` to dotted quads.
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  let addresses: dns.LookupAddress[];
  try {
    addresses = await dns.promises.lookup(host, { all: true });
  } catch {
    throw new FetchGuardError(`Cannot resolve host "${host}"`);
  }
  if (addresses.length === 0) throw new FetchGuardError(`Cannot resolve host "${host}"`);
  // Any non-public answer refuses the host: the connection could use any of them.
  const blocked = addresses.find((a) => !isPublicAddress(a.address));
  if (blocked) throw new FetchGuardError(`Host "${host}" resolves to a non-public address (${blocked.address})`);
  return parsed;
}

/** The lookup the connection itself uses: refuses hosts that resolve to non-public addresses. */
function guardedLookup(
  hostname: string,
  options: dns.LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | dns.LookupAddress[], family?: number) => void,
) {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return callback(err, []);
    const blocked = addresses.find((a) => !isPublicAddress(a.address));
    if (blocked || addresses.length === 0) {
      return callback(new FetchGuardError(`Host "${hostname}" resolves to a non-public address (${blocked?.address ?? 'none'})`), []);
    }
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0].address, addresses[0].family);
  });
}

/** Connections made for guarded fetches resolve through `guardedLookup`. */
const guardedDispatcher = new Agent({ connect: { lookup: guardedLookup as never } });

/**
 * Dispatchers with a connect timeout and a response timeout (until the response's headers, then
 * between body chunks), guarded or not; one per combination, kept for their connection pools.
 */
const timedDispatchers = new Map<string, Agent>();
function timedDispatcher(guarded: boolean, connectTimeoutMs: number, responseTimeoutMs: number): Agent {
  const key = `${guarded}:${connectTimeoutMs}:${responseTimeoutMs}`;
  let agent = timedDispatchers.get(key);
  if (!agent) {
    agent = new Agent({
      connect: { timeout: connectTimeoutMs, ...(guarded ? { lookup: guardedLookup as never } : {}) },
      headersTimeout: responseTimeoutMs,
      bodyTimeout: responseTimeoutMs,
    });
    timedDispatchers.set(key, agent);
  }
  return agent;
}

/** undici's error code of a failed fetch (on the error or its cause). */
function undiciCode(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

async function readCapped(response: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => {});
    throw new FetchTooLargeError(maxBytes);
  }
  if (!response.body) return Buffer.alloc(0);
  // Stream: the declared length can be missing or wrong (chunked, compressed).
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new FetchTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, total);
}

/** GET `url` with the guard applied to every hop, a timeout and a body size cap. */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const signal = AbortSignal.timeout(timeoutMs);
  let headers: Record<string, string> = { ...opts.headers };
  try {
    let target = await abortable(requireFetchableUrl(url, opts), signal);
    for (let redirects = 0; ; redirects++) {
      const response = await fetch(target, {
        redirect: 'manual',
        signal,
        headers,
        // Node's fetch accepts an undici dispatcher; the DOM type does not know the option.
        ...(opts.allowPrivate ? {} : { dispatcher: guardedDispatcher }),
      } as RequestInit);
      const location = response.headers.get('location');
      if (REDIRECT_STATUSES.has(response.status) && location) {
        await response.body?.cancel().catch(() => {});
        if (redirects >= MAX_REDIRECTS) throw new FetchGuardError(`More than ${MAX_REDIRECTS} redirects`);
        let next: string;
        try {
          next = new URL(location, target).href;
        } catch {
          throw new FetchGuardError('Invalid redirect location');
        }
        const checked = await abortable(requireFetchableUrl(next, opts), signal);
        if (checked.origin !== target.origin) {
          headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !CREDENTIAL_HEADERS.includes(k.toLowerCase())));
        }
        target = checked;
        continue;
      }
      const body = await readCapped(response, maxBytes);
      return {
        status: response.status,
        contentType: response.headers.get('content-type'),
        body,
        finalUrl: target.href,
        get text() {
          return body.toString('utf8');
        },
      };
    }
  } catch (error) {
    if (error instanceof FetchGuardError || error instanceof FetchTooLargeError) throw error;
    if (signal.aborted) throw new FetchTimeoutError(`The request timed out after ${timeoutMs} ms`);
    throw error; // network failure: fetch's TypeError
  }
}

export interface GuardedPostResult {
  status: number;
  /** The start of the response body (at most `maxBytes`), for error messages. */
  snippet: string;
}

/**
 * POST `body` to `url` once, with the guard (checked now, and again in the connection's own DNS
 * lookup), a timeout for the whole exchange, one for connecting (default 2 s) and one for the
 * response to start (default 5 s: a receiver that accepts the connection and never answers costs
 * that much, not the whole timeout), and no redirects followed: a 3xx is answered as it came.
 * Reads at most `maxBytes` of the answer (the rest is dropped; a body that stalls after the status
 * keeps the status). Webhook deliveries.
 */
export async function guardedPost(
  url: string,
  opts: GuardOptions & { body: string; headers: Record<string, string>; timeoutMs?: number; connectTimeoutMs?: number; responseTimeoutMs?: number; maxBytes?: number },
): Promise<GuardedPostResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const connectTimeoutMs = opts.connectTimeoutMs ?? 2000;
  const responseTimeoutMs = opts.responseTimeoutMs ?? 5000;
  const maxBytes = opts.maxBytes ?? 1024;
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Response;
  try {
    const target = await abortable(requireFetchableUrl(url, opts), signal);
    response = await fetch(target, {
      method: 'POST',
      redirect: 'manual',
      signal,
      headers: opts.headers,
      body: opts.body,
      dispatcher: timedDispatcher(!opts.allowPrivate, connectTimeoutMs, responseTimeoutMs),
    } as RequestInit);
  } catch (error) {
    if (error instanceof FetchGuardError) throw error;
    if ((error as { cause?: unknown })?.cause instanceof FetchGuardError) throw (error as { cause: FetchGuardError }).cause;
    const code = undiciCode(error);
    if (code === 'UND_ERR_CONNECT_TIMEOUT') throw new FetchTimeoutError(`The request timed out: no connection within ${connectTimeoutMs} ms`);
    if (code === 'UND_ERR_HEADERS_TIMEOUT') throw new FetchTimeoutError(`The request timed out: no response within ${responseTimeoutMs} ms`);
    if (signal.aborted) throw new FetchTimeoutError(`The request timed out after ${timeoutMs} ms`);
    throw error;
  }
  let snippet = '';
  if (response.body) {
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    try {
      while (total < maxBytes) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        total += value.byteLength;
      }
    } catch {
      // The status came; a body that stalls or breaks only shortens the snippet.
    }
    await reader.cancel().catch(() => {});
    snippet = Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
  }
  return { status: response.status, snippet };
}
