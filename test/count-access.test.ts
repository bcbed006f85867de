// A count tells what its list would: `totalCount` of a nested connection follows the access rule
// of the list it counts, for every caller, on every path that reaches the parent object. Asking
// for `totalCount` alone runs only the count (plugin-prisma skips the list's `resolve`), which is
// how guests and outsiders used to read the number of SAML providers, OpenAPI specs and
// translations they are refused.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';

let t: TestApp;
let org: string;
let publicSpace: string;
let users: Record<'admin' | 'reader' | 'guest' | 'outsider', string>;

beforeAll(async () => {
  t = await startTestApp();
  org = t.org.id;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await t.rest(method, path, body);
    expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    return r.body;
  };
  const reader = await t.createUser('read');
  const guest = await t.createUser(null);
  const outsider = await t.createUser(undefined);
  users = { admin: t.token, reader: reader.token, guest: guest.token, outsider: outsider.token };

  // Two of everything the lists hold, so a count that ignores the rule shows.
  for (const label of ['IdP one', 'IdP two']) await call('POST', `/v1/orgs/${org}/saml`, { label });
  for (const slug of ['pets', 'shop']) {
    await call('POST', `/v1/orgs/${org}/openapi`, { slug, source: { text: '{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}' } });
  }
  for (const title of ['French', 'German']) await call('POST', `/v1/orgs/${org}/translations`, { title });
  const mine = await call('PUT', `/v1/orgs/${org}/teams`, { title: 'Guest team' });
  await call('PUT', `/v1/orgs/${org}/teams`, { title: 'Other team' });
  await t.app.prisma.teamMember.create({ data: { teamId: mine.id, userId: guest.user.id } });
  await call('POST', `/v1/orgs/${org}/collections`, { title: 'Coll' });
  const space = await call('POST', `/v1/orgs/${org}/spaces`, { title: 'Public', visibility: 'public' });
  publicSpace = space.id;
  await call('POST', `/v1/orgs/${org}/spaces`, { title: 'Private' });
  await call('POST', `/v1/spaces/${publicSpace}/change-requests`, { subject: 'cr' });
  const site = await call('POST', `/v1/orgs/${org}/sites`, { title: 'Site', spaces: [publicSpace] });
  await call('POST', `/v1/orgs/${org}/sites/${site.id}/share-links`, { name: 'l' });
});
afterAll(async () => {
  await t?.close();
});

type Outcome = { code: string } | { value: unknown };

/** Run a query and read `path` from its data, or the error code when it failed. */
async function ask(query: string, variables: Record<string, unknown>, token: string, path: Array<string | number>): Promise<Outcome> {
  const r = await t.gql(query, variables, token);
  if (r.errors?.length) {
    const code = r.errors[0].extensions?.code;
    // A broken query would make every outcome agree; only access errors are outcomes.
    expect(['FORBIDDEN', 'NOT_FOUND'], `${query}: ${JSON.stringify(r.errors)}`).toContain(code);
    return { code: code! };
  }
  let v: any = r.data;
  for (const k of path) v = v?.[k];
  return { value: v };
}

// The nested connections of Organization, each asked as a list and as a count.
const ORG_CONNECTIONS = ['samlProviders', 'openApiSpecs', 'translations', 'members', 'teams', 'sites', 'spaces', 'collections'] as const;

/** The paths that reach an Organization object: the top-level query, and a public space's organization. */
const orgPaths = {
  organization: (inner: string) => [`query($org: ID!) { organization(id: $org) { ${inner} } }`, ['organization']] as const,
  'space.organization': (inner: string) => [`query($space: ID!) { space(id: $space) { organization { ${inner} } } }`, ['space', 'organization']] as const,
};

async function listAndCount(token: string, path: keyof typeof orgPaths, field: string) {
  const vars = path === 'organization' ? { org } : { space: publicSpace };
  const [lq, lp] = orgPaths[path](`${field}(first: 1000) { nodes { id } }`);
  const [cq, cp] = orgPaths[path](`${field} { totalCount }`);
  const [bq, bp] = orgPaths[path](`${field}(first: 1000) { totalCount nodes { id } }`);
  const list = await ask(lq, vars, token, [...lp, field, 'nodes']);
  const count = await ask(cq, vars, token, [...cp, field, 'totalCount']);
  const both = await ask(bq, vars, token, [...bp, field]);
  return { list, count, both };
}

/** A list outcome as the count it implies: its length, or the same error. */
const asCount = (o: Outcome): Outcome => ('code' in o ? o : { value: (o.value as unknown[]).length });

describe('Organization connections: totalCount follows the list', () => {
  for (const who of ['admin', 'reader', 'guest', 'outsider'] as const) {
    for (const path of Object.keys(orgPaths) as Array<keyof typeof orgPaths>) {
      it(`${who}, through ${path}`, async () => {
        for (const field of ORG_CONNECTIONS) {
          const { list, count, both } = await listAndCount(users[who], path, field);
          expect(count, `${who} ${path}.${field} { totalCount } vs its list ${JSON.stringify(list)}`).toEqual(asCount(list));
          if ('code' in list) expect(both, `${who} ${path}.${field} with both`).toEqual(list);
          else expect(both, `${who} ${path}.${field} with both`).toEqual({ value: { totalCount: (list.value as unknown[]).length, nodes: list.value } });
        }
      });
    }
  }

  it('refuses the SAML, OpenAPI and translation counts to guests and outsiders, as their lists', async () => {
    const expected: Record<string, Record<string, Outcome>> = {
      // Members with a role see both of each.
      admin: { samlProviders: { value: 2 }, openApiSpecs: { value: 2 }, translations: { value: 2 } },
      reader: { samlProviders: { value: 2 }, openApiSpecs: { value: 2 }, translations: { value: 2 } },
      // Guests see the organization but are refused these lists.
      guest: { samlProviders: { code: 'FORBIDDEN' }, openApiSpecs: { code: 'FORBIDDEN' }, translations: { code: 'FORBIDDEN' } },
      // Outsiders reach the organization only through a public space; to them it is not found.
      outsider: { samlProviders: { code: 'NOT_FOUND' }, openApiSpecs: { code: 'NOT_FOUND' }, translations: { code: 'NOT_FOUND' } },
    };
    for (const [who, fields] of Object.entries(expected)) {
      for (const [field, outcome] of Object.entries(fields)) {
        const { count } = await listAndCount(users[who as keyof typeof users], 'space.organization', field);
        expect(count, `${who} ${field}`).toEqual(outcome);
      }
    }
  });

  it('gives guests and outsiders the counts of exactly what they may list', async () => {
    const counts = async (who: keyof typeof users, field: string) => (await listAndCount(users[who], 'space.organization', field)).count;
    // Guests: no member list, their own team, the public space, no collection; sites are refused.
    expect(await counts('guest', 'members')).toEqual({ value: 0 });
    expect(await counts('guest', 'teams')).toEqual({ value: 1 });
    expect(await counts('guest', 'spaces')).toEqual({ value: 1 });
    expect(await counts('guest', 'collections')).toEqual({ value: 0 });
    expect(await counts('guest', 'sites')).toEqual({ code: 'FORBIDDEN' });
    // Outsiders: nothing.
    expect(await counts('outsider', 'members')).toEqual({ value: 0 });
    expect(await counts('outsider', 'teams')).toEqual({ value: 0 });
    expect(await counts('outsider', 'spaces')).toEqual({ value: 0 });
    expect(await counts('outsider', 'sites')).toEqual({ code: 'NOT_FOUND' });
    // Readers: everything but what needs admin.
    expect(await counts('reader', 'members')).toEqual({ value: 3 }); // admin, reader, guest
    expect(await counts('reader', 'teams')).toEqual({ value: 2 });
    expect(await counts('reader', 'spaces')).toEqual({ value: 2 });
    expect(await counts('reader', 'sites')).toEqual({ value: 1 });
  });

  it('hides the organization itself from an outsider', async () => {
    for (const inner of ['id', 'samlProviders { totalCount }', 'translations { totalCount }', 'openApiSpecs { totalCount }']) {
      const r = await ask(`query($org: ID!) { organization(id: $org) { ${inner} } }`, { org }, users.outsider, ['organization']);
      expect(r, inner).toEqual({ code: 'NOT_FOUND' });
    }
  });
});

describe('other nested connections', () => {
  it('Site.shareLinks: counted only for organization admins, like the list', async () => {
    const q = (sel: string) => `query($org: ID!) { organization(id: $org) { sites { nodes { shareLinks { ${sel} } } } } }`;
    for (const [who, expected] of [['admin', { value: 1 }], ['reader', { code: 'FORBIDDEN' }]] as const) {
      const list = await ask(q('nodes { id }'), { org }, users[who], ['organization', 'sites', 'nodes', 0, 'shareLinks', 'nodes']);
      const count = await ask(q('totalCount'), { org }, users[who], ['organization', 'sites', 'nodes', 0, 'shareLinks', 'totalCount']);
      expect(count, who).toEqual(asCount(list));
      expect(count, who).toEqual(expected);
    }
  });

  it('Space.changeRequestList: the count agrees with the list for every caller', async () => {
    const q = (sel: string) => `query($space: ID!) { space(id: $space) { changeRequestList { ${sel} } } }`;
    for (const who of ['admin', 'reader', 'guest', 'outsider'] as const) {
      const list = await ask(q('nodes { id }'), { space: publicSpace }, users[who], ['space', 'changeRequestList', 'nodes']);
      const count = await ask(q('totalCount'), { space: publicSpace }, users[who], ['space', 'changeRequestList', 'totalCount']);
      expect(count, who).toEqual(asCount(list));
      expect(count, who).toEqual({ value: 1 }); // a public space: anyone signed in may read it
    }
  });
});
