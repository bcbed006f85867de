import dns from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  FetchGuardError,
  FetchTimeoutError,
  FetchTooLargeError,
  requireFetchableUrl,
  effectiveAddress,
  isPublicAddress,
  safeFetch,
} from '../../src/lib/url-guard.ts';

const servers: http.Server[] = [];

async function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

let base: string;
let other: string; // a second origin

beforeAll(async () => {
  other = await listen((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.headers));
  });
  base = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const redirect = /^\/redirect\/(\d+)$/.exec(url.pathname);
    if (redirect) {
      const n = Number(redirect[1]);
      res.writeHead(n === 0 ? 200 : 302, n === 0 ? { 'content-type': 'text/plain' } : { location: `/redirect/${n - 1}` });
      res.end(n === 0 ? 'arrived' : '');
      return;
    }
    switch (url.pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('hello');
        return;
      case '/not-found':
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('nope');
        return;
      case '/slow':
        setTimeout(() => res.end('late'), 5_000).unref();
        return;
      case '/slow-body':
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('first chunk');
        setTimeout(() => res.end('rest'), 5_000).unref();
        return;
      case '/big': {
        // Chunked, no content-length: only streaming can enforce the cap.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        let sent = 0;
        const push = () => {
          while (sent < 1_000_000) {
            sent += 10_000;
            if (!res.write(Buffer.alloc(10_000, 1))) return res.once('drain', push);
          }
          res.end();
        };
        push();
        return;
      }
      case '/big-declared':
        res.writeHead(200, { 'content-length': '5000000' });
        res.end();
        return;
      case '/exact':
        res.end(Buffer.alloc(1000, 2));
        return;
      case '/to-other':
        res.writeHead(307, { location: `${other}/echo` });
        res.end();
        return;
      case '/no-location':
        res.writeHead(302);
        res.end('redirect without location');
        return;
      case '/echo':
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify(req.headers));
        return;
    }
    res.writeHead(500);
    res.end();
  });
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

/** Make `dns.promises.lookup` answer from a table (hosts outside it fail like ENOTFOUND). */
function stubDns(table: Record<string, string[]>) {
  return vi.spyOn(dns.promises, 'lookup').mockImplementation((async (host: string) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as never);
}

const privateOnly = { allowPrivate: false };

describe('isPublicAddress', () => {
  it('accepts only public unicast addresses', () => {
    for (const a of ['8.8.8.8', '93.184.216.34', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(a), a).toBe(true);
    for (const a of [
      '127.0.0.1', '127.1.2.3', '10.0.0.1', '172.16.5.4', '192.168.0.10', '169.254.169.254', '100.64.0.1', '0.0.0.0',
      '224.0.0.1', '255.255.255.255', '192.0.2.1', '198.18.0.1', '240.0.0.1', '::1', '::', 'fe80::1', 'fc00::1',
      'fd12:3456::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1',
      '2002:7f00:1::', '2001:db8::1', 'not-an-ip',
    ]) {
      expect(isPublicAddress(a), a).toBe(false);
    }
  });
});

describe('IPv6 forms that embed an IPv4 address', () => {
  // [address, the IPv4 address it reaches, public?]
  const cases: Array<[string, string, boolean]> = [
    // IPv4-mapped
    ['::ffff:7f00:1', '127.0.0.1', false],
    ['::ffff:a9fe:a9fe', '169.254.169.254', false],
    ['::ffff:808:808', '8.8.8.8', true],
    // IPv4-compatible (deprecated ::/96)
    ['::7f00:1', '127.0.0.1', false],
    ['::a9fe:a9fe', '169.254.169.254', false],
    ['::a00:1', '10.0.0.1', false],
    ['::c0a8:1', '192.168.0.1', false],
    ['::6440:1', '100.64.0.1', false],
    ['::2', '0.0.0.2', false],
    ['::808:808', '8.8.8.8', true],
    // NAT64 well-known prefix 64:ff9b::/96
    ['64:ff9b::7f00:1', '127.0.0.1', false],
    ['64:ff9b::a9fe:a9fe', '169.254.169.254', false],
    ['64:ff9b::a00:1', '10.0.0.1', false],
    ['64:ff9b::ac10:1', '172.16.0.1', false],
    ['64:ff9b::808:808', '8.8.8.8', true],
    ['64:ff9b::5db8:d822', '93.184.216.34', true],
    // 6to4 2002:AABB:CCDD::/48
    ['2002:7f00:0001::', '127.0.0.1', false],
    ['2002:7f00:1:2::3', '127.0.0.1', false],
    ['2002:0a00:0001::', '10.0.0.1', false],
    ['2002:a9fe:a9fe::1', '169.254.169.254', false],
    ['2002:c0a8:0101::', '192.168.1.1', false],
    ['2002:0808:0808::', '8.8.8.8', true],
    ['2002:808:808:1::5', '8.8.8.8', true],
  ];

  it.each(cases)('%s reaches %s (public: %s)', (address, ipv4, expected) => {
    expect(effectiveAddress(address).toString()).toBe(ipv4);
    expect(isPublicAddress(address)).toBe(expected);
  });

  it('keeps ::, ::1, the local-use NAT64 prefix and Teredo non-public, and plain IPv6 as it is', () => {
    for (const a of ['::', '::1', '64:ff9b:1::7f00:1', '64:ff9b:1::808:808', '2001:0:4136:e378:8000:63bf:3fff:fdd2']) {
      expect(isPublicAddress(a), a).toBe(false);
    }
    expect(effectiveAddress('::1').toString()).toBe('::1');
    expect(effectiveAddress('2606:4700:4700::1111').toString()).toBe('2606:4700:4700::1111');
    expect(isPublicAddress('2606:4700:4700::1111')).toBe(true);
  });

  it('refuses URLs and DNS answers in these forms', async () => {
    for (const url of ['http://[::7f00:1]/', 'http://[::127.0.0.1]/', 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'http://[2002:a00:1::]/', 'http://[::ffff:7f00:1]/']) {
      await expect(requireFetchableUrl(url, privateOnly), url).rejects.toThrow(/non-public/);
    }
    stubDns({ 'nat64.example': ['64:ff9b::7f00:1'], 'sixtofour.example': ['2002:a9fe:a9fe::1'], 'public64.example': ['64:ff9b::808:808'] });
    await expect(requireFetchableUrl('https://nat64.example/', privateOnly)).rejects.toThrow(/64:ff9b::7f00:1/);
    await expect(requireFetchableUrl('https://sixtofour.example/', privateOnly)).rejects.toThrow(FetchGuardError);
    await expect(requireFetchableUrl('https://public64.example/', privateOnly)).resolves.toBeInstanceOf(URL);
  });
});

describe('requireFetchableUrl', () => {
  it('refuses loopback unless private addresses are allowed', async () => {
    await expect(requireFetchableUrl(`${base}/ok`, privateOnly)).rejects.toThrow(FetchGuardError);
    await expect(requireFetchableUrl('http://localhost/', privateOnly)).rejects.toThrow(FetchGuardError);
    await expect(requireFetchableUrl('http://[::1]:8080/', privateOnly)).rejects.toThrow(/non-public/);
    await expect(requireFetchableUrl('http://[::ffff:127.0.0.1]/', privateOnly)).rejects.toThrow(/non-public/);
    await expect(requireFetchableUrl('http://2130706433/', privateOnly)).rejects.toThrow(/127\.0\.0\.1/);
    await expect(requireFetchableUrl('http://0x7f.1/', privateOnly)).rejects.toThrow(FetchGuardError);
    const url = await requireFetchableUrl(`${base}/ok`, { allowPrivate: true });
    expect(url).toBeInstanceOf(URL);
    expect(url.href).toBe(`${base}/ok`);
  });

  it('refuses private, link-local, CGNAT and unspecified addresses', async () => {
    for (const url of ['http://10.0.0.1/', 'https://10.255.1.2:8443/x', 'http://192.168.1.1/', 'http://172.31.0.1/', 'http://169.254.169.254/latest/meta-data/', 'http://100.64.1.1/', 'http://0.0.0.0/', 'http://[fd00::1]/', 'http://[fe80::1]/']) {
      await expect(requireFetchableUrl(url, privateOnly), url).rejects.toThrow(FetchGuardError);
    }
  });

  it('checks every address a host resolves to', async () => {
    stubDns({ 'public.example': ['93.184.216.34', '2606:2800:220:1::1'], 'mixed.example': ['93.184.216.34', '10.0.0.7'], 'mapped.example': ['::ffff:192.168.0.1'] });
    await expect(requireFetchableUrl('https://public.example/page', privateOnly)).resolves.toBeInstanceOf(URL);
    await expect(requireFetchableUrl('https://mixed.example/', privateOnly)).rejects.toThrow(/10\.0\.0\.7/);
    await expect(requireFetchableUrl('https://mapped.example/', privateOnly)).rejects.toThrow(FetchGuardError);
    await expect(requireFetchableUrl('https://unknown.example/', privateOnly)).rejects.toThrow(/Cannot resolve/);
  });

  it('accepts public IP literals', async () => {
    await expect(requireFetchableUrl('http://8.8.8.8/', privateOnly)).resolves.toBeInstanceOf(URL);
  });

  it('refuses other schemes, credentials and invalid URLs', async () => {
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'gopher://127.0.0.1/', 'data:text/plain,hi', 'javascript:alert(1)']) {
      await expect(requireFetchableUrl(url, { allowPrivate: true }), url).rejects.toThrow(/Only http and https/);
    }
    await expect(requireFetchableUrl('http://user:pass@example.com/', { allowPrivate: true })).rejects.toThrow(/credentials/);
    await expect(requireFetchableUrl('not a url', { allowPrivate: true })).rejects.toThrow(/Invalid URL/);
    const error = await requireFetchableUrl('not a url', privateOnly).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FetchGuardError);
    expect((error as FetchGuardError).message).toBe('Invalid URL');
  });
});

describe('safeFetch', () => {
  const allowed = { allowPrivate: true, timeoutMs: 2_000, maxBytes: 100_000 };

  it('refuses loopback when private addresses are not allowed', async () => {
    await expect(safeFetch(`${base}/ok`, { ...allowed, allowPrivate: false })).rejects.toThrow(FetchGuardError);
  });

  it('fetches when allowed', async () => {
    const r = await safeFetch(`${base}/ok`, allowed);
    expect(r).toMatchObject({ status: 200, contentType: 'text/plain; charset=utf-8', body: Buffer.from('hello'), finalUrl: `${base}/ok` });
    expect(r.text).toBe('hello');
    const notFound = await safeFetch(`${base}/not-found`, allowed);
    expect(notFound.status).toBe(404);
    expect(notFound.body.toString()).toBe('nope');
  });

  it('follows up to 5 redirects', async () => {
    const r = await safeFetch(`${base}/redirect/5`, allowed);
    expect(r.status).toBe(200);
    expect(r.body.toString()).toBe('arrived');
    expect(r.finalUrl).toBe(`${base}/redirect/0`);
    await expect(safeFetch(`${base}/redirect/6`, allowed)).rejects.toThrow(/More than 5 redirects/);
  });

  it('returns a redirect without location as it is', async () => {
    const r = await safeFetch(`${base}/no-location`, allowed);
    expect(r.status).toBe(302);
  });

  it('drops credentials when a redirect leaves the origin', async () => {
    const r = await safeFetch(`${base}/to-other`, { ...allowed, headers: { Authorization: 'Bearer secret', 'X-Trace': 't1' } });
    const headers = JSON.parse(r.body.toString()) as Record<string, string>;
    expect(r.finalUrl).toBe(`${other}/echo`);
    expect(headers.authorization).toBeUndefined();
    expect(headers['x-trace']).toBe('t1');
    const same = await safeFetch(`${base}/echo`, { ...allowed, headers: { Authorization: 'Bearer secret' } });
    expect((JSON.parse(same.body.toString()) as Record<string, string>).authorization).toBe('Bearer secret');
  });

  it('re-checks every redirect hop: a redirect to loopback is refused', async () => {
    stubDns({ 'public.example': ['93.184.216.34'] });
    const fetchMock = vi.fn(async (input: string | URL | Request) => {
      const url = new URL(String(input));
      if (url.hostname === 'public.example') return new Response(null, { status: 302, headers: { location: `${base}/ok` } });
      throw new Error(`unexpected fetch of ${url.href}`);
    });
    vi.stubGlobal('fetch', fetchMock);
    await expect(safeFetch('http://public.example/start', { ...allowed, allowPrivate: false })).rejects.toThrow(FetchGuardError);
    expect(fetchMock).toHaveBeenCalledTimes(1);

    fetchMock.mockImplementation(async () => new Response(null, { status: 301, headers: { location: 'http://10.0.0.1/admin' } }));
    await expect(safeFetch('http://public.example/start', { ...allowed, allowPrivate: false })).rejects.toThrow(/10\.0\.0\.1/);
    fetchMock.mockImplementation(async () => new Response(null, { status: 308, headers: { location: 'file:///etc/passwd' } }));
    await expect(safeFetch('http://public.example/start', { ...allowed, allowPrivate: false })).rejects.toThrow(/Only http and https/);
  });

  it('times out waiting for the response', async () => {
    const started = Date.now();
    await expect(safeFetch(`${base}/slow`, { ...allowed, timeoutMs: 200 })).rejects.toThrow(FetchTimeoutError);
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('times out while reading a slow body', async () => {
    await expect(safeFetch(`${base}/slow-body`, { ...allowed, timeoutMs: 300 })).rejects.toThrow(FetchTimeoutError);
  });

  it('caps the body size while streaming', async () => {
    await expect(safeFetch(`${base}/big`, { ...allowed, maxBytes: 50_000 })).rejects.toThrow(FetchTooLargeError);
    await expect(safeFetch(`${base}/big-declared`, { ...allowed, maxBytes: 50_000 })).rejects.toThrow(FetchTooLargeError);
    const exact = await safeFetch(`${base}/exact`, { ...allowed, maxBytes: 1000 });
    expect(exact.body.length).toBe(1000);
    await expect(safeFetch(`${base}/exact`, { ...allowed, maxBytes: 999 })).rejects.toThrow(FetchTooLargeError);
    // The server is still usable afterwards.
    expect((await safeFetch(`${base}/ok`, allowed)).body.toString()).toBe('hello');
  });
});

describe('DNS rebinding', () => {
  it('checks the address the connection really uses, not only the first answer', async () => {
    let hits = 0;
    const url = await listen((_req, res) => {
      hits++;
      res.end('secret');
    });
    const port = new URL(url).port;
    // The pre-check sees a public address; the connection's own lookup gets loopback.
    stubDns({ localhost: ['93.184.216.34'] });
    await expect(safeFetch(`http://localhost:${port}/`, privateOnly)).rejects.toThrow();
    expect(hits).toBe(0);
  });
});
