// Usage: node bench/worst-case.mjs <baseUrl> <adminToken> <serverPid>   (see docs/performance.md)
// Worst cases the limits allow, in parallel, against a running server; prints the server's peak RSS.
const [, , base, token, pid] = process.argv;
const H = { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'accept-encoding': 'identity' };
const j = async (m, p, b) => { const r = await fetch(base + p, { method: m, headers: H, body: b === undefined ? undefined : typeof b === 'string' ? b : JSON.stringify(b) }); const t = await r.text(); return { status: r.status, body: t.length < 2000 ? t : t.slice(0, 200) + '…', len: t.length }; };
const fs = await import('node:fs');
const rss = () => { const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8'); return { rss: s.match(/VmRSS:\s+(\d+)/)[1] / 1024 | 0, hwm: s.match(/VmHWM:\s+(\d+)/)[1] / 1024 | 0 }; };
const orgs = JSON.parse((await j('GET', '/v1/orgs')).body); const org = orgs.items[0].id;
const space = JSON.parse((await j('POST', `/v1/orgs/${org}/spaces`, { title: 'Probe' })).body).id;
console.log('start', rss());
// 1 MB of markdown with structure (headings, lists, links, code, emphasis).
const para = '## Heading\n\nSome *emphasis*, **strong**, a [link](https://example.com/x) and `code`.\n\n- item one\n- item [two](./other)\n\n```js\nconst a = 1;\n```\n\n';
const md = para.repeat(Math.floor(250_000 / para.length));
async function batch() {
  const cr = JSON.parse((await j('POST', `/v1/spaces/${space}/change-requests`, { subject: 'big' })).body);
  const changes = Array.from({ length: 14 }, (_, i) => ({ operation: 'insert_page', title: `P${i}`, document: { markdown: md } }));
  const body = JSON.stringify({ changes });
  const r = await j('POST', `/v1/spaces/${space}/change-requests/${cr.id}/content`, body);
  return `${r.status} (${(body.length / 1e6).toFixed(1)} MB)`;
}
let peak = 0; const iv = setInterval(() => { try { peak = Math.max(peak, rss().rss); } catch {} }, 50);
for (let round = 0; round < Number(process.env.ROUNDS ?? 2); round++) {
  const t0 = Date.now();
  const out = await Promise.allSettled(Array.from({ length: Number(process.env.CONC ?? 8) }, batch));
  console.log('8 parallel 7 MB batches', out.map((o) => o.status === 'fulfilled' ? o.value : o.reason.message), Date.now() - t0, 'ms', rss());
}
// GraphQL: at the alias limit, each a large connection.
const aliases = Array.from({ length: 100 }, (_, i) => `a${i}: organizations(first: 1000) { nodes { id title spaces(first: 1000) { nodes { id title } } } }`).join(' ');
const q = JSON.stringify({ query: `{ viewer { ${aliases} } }` });
const g = await Promise.allSettled(Array.from({ length: 8 }, () => j('POST', '/graphql', q)));
console.log('8 parallel 100-alias queries', g.map((o) => o.status === 'fulfilled' ? o.value.status + ' ' + o.value.len : o.reason.message), rss());
// The reader of a whole space after the big batches: content of every page.
const pages = await j('GET', `/v1/spaces/${space}/content/pages`);
console.log('pages', pages.status, pages.len, rss());
clearInterval(iv);
const alive = await j('GET', '/healthz');
console.log('alive', alive.status, 'peak RSS sampled', peak, 'MB', rss());
