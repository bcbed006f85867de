// `npm run audience-probe`: issue 21's check from outside. Starts the server as `npm start` runs it
// (the esbuild bundle) on a fresh database, builds published sites of every visibility with
// conditioned sections, site spaces and pages (each conditioned item's title and body carry a
// marker, SECRET-…), an unpublished site and a private space, and then reads every published read
// path as each kind of hostile reader: anonymous, an outsider's token, a published-read token,
// a share-link holder, a visitor whose token opens nothing, and a caller asserting signed claims.
// Every answer is searched for a marker, a condition, or a counter it should not carry; the table
// says what each reader got on each path, and the script exits 1 on any leak.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { startBenchDatabase, freePort } from './db.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = 'dg_probe_bootstrap_token_0123456789';
const log = (m: string) => console.error(`· ${m}`);

const db = await startBenchDatabase({ log });
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
execFileSync('node', ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
const server: ChildProcess = spawn('node', ['--max-old-space-size=512', '.build/server/main.mjs'], {
  cwd: ROOT,
  env: { ...process.env, DATABASE_URL: db.url, PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: base, DOCGRAPH_ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn', RATE_LIMIT: 'off' },
  stdio: ['ignore', 'ignore', 'inherit'],
});
let exited = '';
server.on('exit', (code, signal) => (exited = `exit ${code ?? signal}`));
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break;
  } catch {}
  if (i > 300 || exited) throw new Error(`server did not start: ${exited}`);
  await new Promise((r) => setTimeout(r, 100));
}
const admin = (...args: string[]) => execFileSync('node', ['.build/cli/admin.mjs', ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: db.url } }).toString().trim();

type Answer = { status: number; text: string; json: any };
async function call(token: string | null, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(base + url, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json };
}
async function must(token: string | null, query: string, variables: Record<string, unknown>) {
  const r = await call(token, 'POST', '/graphql', { query, variables });
  if (r.status !== 200 || r.json?.errors) throw new Error(`${query.slice(0, 60)}: ${r.status} ${r.text.slice(0, 300)}`);
  return r.json.data;
}

// ------------------------------------------------------------------ the sites

const org = (await call(ADMIN, 'GET', '/v1/orgs')).json.items[0].id as string;
const SIGNED = 'visitor.claims.isEnterprise';
const UNSIGNED = 'visitor.claims.unsigned.plan == "pro"';

async function space(title: string, pages: Array<{ title: string; condition?: string }>) {
  const id = (await call(ADMIN, 'POST', `/v1/orgs/${org}/spaces`, { title })).json.id as string;
  const changes = pages.map((p) => ({ operation: 'insert_page', title: p.title, ...(p.condition ? { condition: p.condition } : {}), document: { markdown: `${p.title} body.` } }));
  await must(ADMIN, `mutation($i: ApplySpaceContentChangesInput!) { applySpaceContentChanges(input: $i) { revision { id } } }`, { i: { spaceId: id, changes } });
  return id;
}

async function site(visibility: string, published: boolean) {
  const open = await space('Handbook', [{ title: 'Welcome' }, { title: 'SECRET-signed-page', condition: SIGNED }, { title: 'SECRET-unsigned-page', condition: UNSIGNED }]);
  const hidden = await space('SECRET-space', [{ title: 'SECRET-in-hidden-space' }]);
  const created = (await call(ADMIN, 'POST', `/v1/orgs/${org}/sites`, { title: `Probe ${visibility}`, visibility, spaces: [open] })).json;
  const siteId = created.id as string;
  const add = async (spaceId: string, title: string, condition: string) => {
    const s = await must(ADMIN, `mutation($i: AddSectionToSiteInput!) { addSectionToSite(input: $i) { section { id } } }`, { i: { siteId, spaceId, title } });
    await must(ADMIN, `mutation($i: UpdateSiteSectionInput!) { updateSiteSection(input: $i) { section { id } } }`, { i: { siteId, sectionId: s.addSectionToSite.section.id, condition } });
  };
  await add(hidden, 'SECRET-signed-section', SIGNED);
  await add(await space('SECRET-pro-space', [{ title: 'SECRET-pro-page' }]), 'SECRET-unsigned-section', UNSIGNED);
  // A conditioned site space beside the open one, in the first section.
  const sections = (await must(ADMIN, `query($id: ID!) { site(id: $id) { sections { id title } } }`, { id: siteId })).site.sections;
  const first = sections.find((s: any) => !s.title.startsWith('SECRET'));
  const beta = await must(ADMIN, `mutation($i: AddSpaceToSiteInput!) { addSpaceToSite(input: $i) { siteSpace { id } } }`, { i: { siteId, spaceId: await space('SECRET-beta-space', [{ title: 'SECRET-beta-page' }]), sectionId: first.id } });
  await must(ADMIN, `mutation($i: UpdateSiteSpaceInput!) { updateSiteSpace(input: $i) { siteSpace { id } } }`, { i: { siteId, siteSpaceId: beta.addSpaceToSite.siteSpace.id, condition: 'visitor.claims.isBeta' } });
  if (published) await call(ADMIN, 'POST', `/v1/orgs/${org}/sites/${siteId}/publish`);
  const link = (await call(ADMIN, 'POST', `/v1/orgs/${org}/sites/${siteId}/share-links`, { name: 'probe' })).json;
  const key = (await must(ADMIN, `mutation($i: SiteVisitorKeyInput!) { regenerateSiteVisitorKey(input: $i) { publishingAuth { privateKey } } }`, { i: { siteId } }).catch(() => null))?.regenerateSiteVisitorKey?.publishingAuth?.privateKey;
  // Every item id the admin sees: node(id:) refetches of each.
  const ids = (await must(ADMIN, `query($id: ID!) { site(id: $id) { sections { id siteSpaces { id } } } }`, { id: siteId })).site.sections.flatMap((s: any) => [s.id, ...s.siteSpaces.map((ss: any) => ss.id)]);
  return { siteId, visibility, published, shareKey: link.key as string, secret: key as string | undefined, ids, open };
}

log('building the sites');
const sites = [await site('public', true), await site('unlisted', true), await site('share-link', true), await site('visitor-auth', true), await site('public', false)];
admin('create-user', '--email', 'outsider@probe.test', '--name', 'Outsider');
const outsiderToken = admin('create-token', '--email', 'outsider@probe.test', '--label', 'probe');
const adminEmail = (await call(ADMIN, 'GET', '/v1/user')).json.email as string;
const scopedToken = admin('create-token', '--email', adminEmail, '--label', 'renderer', '--published');

// ------------------------------------------------------------------ the readers and the paths

type Reader = { name: string; token: string | null; headers?: (s: (typeof sites)[number]) => Promise<Record<string, string>>; shareKey?: boolean; visitor?: unknown; control?: true };
const readers: Reader[] = [
  // The control: an organization admin must see the markers, or the probe proves nothing.
  { name: 'member (control: sees everything)', token: ADMIN, control: true },
  { name: 'anonymous', token: null },
  { name: 'outsider', token: outsiderToken },
  { name: 'published-read token (admin\'s)', token: scopedToken },
  { name: 'share-link holder', token: null, shareKey: true },
  {
    name: 'visitor, token without claims',
    token: null,
    headers: async (s): Promise<Record<string, string>> => (s.secret ? { 'x-visitor-token': await new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setAudience(s.siteId).setExpirationTime('5m').sign(Buffer.from(s.secret, 'base64url')) } : {}),
  },
  { name: 'forged visitor token', token: null, headers: async (s) => ({ 'x-visitor-token': await new SignJWT({ isEnterprise: true, isBeta: true }).setProtectedHeader({ alg: 'HS256' }).setAudience(s.siteId).setExpirationTime('5m').sign(Buffer.from('x'.repeat(32))) }) },
  { name: 'asserting signed claims', token: outsiderToken, visitor: { claims: { isEnterprise: true, isBeta: true } } },
];

const NESTED = `structure { items { ... on SiteSection { title condition siteSpaces { title condition space { title changeRequests commentCount revision { allPages { title condition markdown } } } } } } }
  sections { title condition } sectionsConnection(first: 100) { nodes { title condition } } siteSpacesConnection(first: 100) { nodes { title condition } } siteSpaceCount`;

function leaks(text: string, reader: Reader): string[] {
  const found: string[] = [];
  if (/SECRET-/.test(text)) found.push(text.match(/SECRET-[a-z-]+/)![0]);
  // A condition, as a field's value (a 400 naming `visitor.claims.x` is not one).
  if (/"condition":\s*"/.test(text)) found.push('a condition');
  if (/"(changeRequests|commentCount)":[1-9]/.test(text)) found.push('a counter');
  void reader;
  return found;
}

type Row = { reader: string; site: string; path: string; status: number; leak: string };
const rows: Row[] = [];
for (const reader of readers) {
  for (const s of sites) {
    const headers = (await reader.headers?.(s)) ?? {};
    const key = reader.shareKey ? s.shareKey : undefined;
    const q = key ? `?shareKey=${encodeURIComponent(key)}` : '';
    const vars = { id: s.siteId, key: key ?? null, v: reader.visitor ?? null };
    const paths: Array<[string, () => Promise<Answer>]> = [
      ['publishedSite (nested, paged)', () => call(reader.token, 'POST', '/graphql', { query: `query($id: ID!, $key: String, $v: JSON) { publishedSite(siteId: $id, shareKey: $key, visitor: $v) { ${NESTED} } }`, variables: vars }, headers)],
      ['node(id:) of every item', () => call(reader.token, 'POST', '/graphql', { query: `query($ids: [ID!]!) { nodes(ids: $ids) { id ... on SiteSection { title condition } ... on SiteSpace { title condition } } }`, variables: { ids: s.ids } }, headers)],
      ['searchSite "SECRET"', () => call(reader.token, 'POST', '/graphql', { query: `query($id: ID!, $key: String, $v: JSON) { searchSite(siteId: $id, query: "SECRET", shareKey: $key, visitor: $v) { totalCount nodes { title path } } }`, variables: vars }, headers)],
      ['publishedContentByUrl', () => call(reader.token, 'POST', '/graphql', { query: `query($u: String!, $key: String, $v: JSON) { publishedContentByUrl(url: $u, shareKey: $key, visitor: $v) { page { title } siteSection { title } site { sections { title } } } }`, variables: { u: `${base}/sites/${s.siteId}/secret-signed-section/`, key: key ?? null, v: reader.visitor ?? null } }, headers)],
      ['space(id:, shareKey:)', () => call(reader.token, 'POST', '/graphql', { query: `query($id: ID!, $key: String) { space(id: $id, shareKey: $key) { changeRequests revision { allPages { title condition } } } }`, variables: { id: s.open, key: key ?? null } }, headers)],
      ['REST …/published', () => call(reader.token, 'GET', `/v1/orgs/${org}/sites/${s.siteId}/published${q}`, undefined, headers)],
      ['REST …/structure', () => call(reader.token, 'GET', `/v1/orgs/${org}/sites/${s.siteId}/structure${q}`, undefined, headers)],
      ['REST …/sections', () => call(reader.token, 'GET', `/v1/orgs/${org}/sites/${s.siteId}/sections${q}`, undefined, headers)],
      ['REST …/site-spaces', () => call(reader.token, 'GET', `/v1/orgs/${org}/sites/${s.siteId}/site-spaces${q}`, undefined, headers)],
      ['REST POST …/search', () => call(reader.token, 'POST', `/v1/orgs/${org}/sites/${s.siteId}/search${q}`, { query: 'SECRET' }, headers)],
      ['REST /v1/urls/published', () => call(reader.token, 'GET', `/v1/urls/published?url=${encodeURIComponent(`${base}/sites/${s.siteId}/secret-signed-section/`)}`, undefined, headers)],
    ];
    for (const [name, run] of paths) {
      const r = await run();
      if (r.status >= 500) throw new Error(`${reader.name} ${s.visibility} ${name}: ${r.status} ${r.text.slice(0, 300)}`);
      rows.push({ reader: reader.name, site: `${s.visibility}${s.published ? '' : ' (unpublished)'}`, path: name, status: r.status, leak: leaks(r.text, reader).join(', ') });
    }
  }
}
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await db.stop();

// ------------------------------------------------------------------ the table

const control = readers.find((r) => r.control)!.name;
const leaked = rows.filter((r) => r.leak && r.reader !== control);
const controlSaw = rows.filter((r) => r.reader === control && r.leak).length;
const byReader = new Map<string, Row[]>();
for (const r of rows) byReader.set(r.reader, [...(byReader.get(r.reader) ?? []), r]);
console.log(`| reader | answers (status × count) | reads with a marker, condition or counter |\n|---|---|---|`);
for (const [reader, rs] of byReader) {
  const statuses = new Map<number, number>();
  for (const r of rs) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
  const summary = [...statuses].sort((a, b) => a[0] - b[0]).map(([st, n]) => `${st}×${n}`).join(' ');
  console.log(`| ${reader} | ${summary} | ${rs.filter((r) => r.leak).length} |`);
}
console.log(`\nControl: the admin's answers carried markers, conditions or counters on ${controlSaw} reads (0 would mean the probe sees nothing).`);
console.log(`${rows.length} reads by ${readers.length} hostile readers on ${sites.length} sites and ${rows.length / readers.length / sites.length} paths; ${leaked.length} leaked.`);
for (const r of leaked) console.log(`LEAK ${r.reader} · ${r.site} · ${r.path} (${r.status}): ${r.leak}`);
process.exit(leaked.length || controlSaw === 0 ? 1 : 0);
