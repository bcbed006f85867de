// PDF exports render in a job: fetch an export's URL until it stops answering 202.
import { expect } from 'vitest';

export async function waitForPdf(url: string, token: string, timeoutMs = 60_000): Promise<Response> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 202) return res;
    expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
    await res.arrayBuffer();
    if (Date.now() > deadline) throw new Error(`${url} still 202 after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
