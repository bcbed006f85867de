// Relay 21 against the committed schema and a live app.
// (1) The documents we hand users — the README's GraphQL (in its shell and JavaScript examples)
//     and GraphiQL's example tabs (src/http/explorer.ts) — compile with relay-compiler against
//     schema.graphql: a schema change that breaks one, or an example that drifts from the schema,
//     fails here. Relay's rules need a few mechanical changes in a temporary copy only: every
//     operation named `<Module><Name>Query|Mutation|Subscription`, every fragment `<Module>_<name>`,
//     one definition per graphql tag.
// (2) A Relay Environment (relay-runtime; its store keys records by `id` alone) runs the review and
//     site screens of fixtures/clients/screens.ts over the network: each pane reads its own data,
//     and Relay logs none of its identity warnings ("conflicting field", "conflicting types").
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Kind, parse, print, visit, type DefinitionNode, type DocumentNode } from 'graphql';
import RelayRuntime from 'relay-runtime';
import type { ConcreteRequest } from 'relay-runtime';
import { explorerOptions } from '../src/http/explorer.ts';
import { startTestApp, type TestApp } from './helpers.ts';
import {
  CHANGE_REQUEST_PANE, EDITOR_PANE, EDITOR_SHOWS, MAIN_PANE, NO_CLAIMS, PREVIEW_PANE, RENAME_IN_CHANGE_REQUEST, VISITOR_SHOWS,
  consoleDuring, sectionsShown, seedScreens, titleOf, type Screens,
} from './fixtures/clients/screens.ts';

const { Environment, Network, RecordSource, Store, createOperationDescriptor, fetchQuery, commitMutation } = RelayRuntime;
const require = createRequire(import.meta.url);
const ROOT = path.resolve(import.meta.dirname, '..');

// ------------------------------------------------------------------ the documents users copy

const OPERATION_KEYWORD = /^\s*(query|mutation|subscription|fragment)\b/;

/** The GraphQL documents in the README's code blocks: shell and JS string literals, and JSON `"query"` values. */
export function readmeDocuments(markdown: string): string[] {
  const docs: string[] = [];
  for (const block of markdown.matchAll(/^[ \t]*```[\w-]*\n([\s\S]*?)^[ \t]*```/gm)) {
    const code = block[1];
    for (const m of code.matchAll(/"query"\s*:\s*"((?:[^"\\]|\\.)*)"/g)) docs.push(JSON.parse(`"${m[1]}"`) as string);
    for (const m of code.matchAll(/'([^'\n]*(?:\n[^'\n]*)*)'/g)) if (OPERATION_KEYWORD.test(m[1])) docs.push(m[1]);
  }
  return docs.filter((d) => OPERATION_KEYWORD.test(d));
}

/** GraphiQL's example tabs. */
function explorerDocuments(): string[] {
  return (explorerOptions().defaultTabs ?? []).map((tab) => tab.query ?? '').filter(Boolean);
}

const SUFFIX = { query: 'Query', mutation: 'Mutation', subscription: 'Subscription' } as const;

/** One module's source: every definition of `doc` renamed to Relay's rules for module `module`, one per graphql tag. */
export function relayModule(module: string, doc: DocumentNode): string {
  const fragment = (name: string) => `${module}_${name}`;
  const renamed = visit(doc, {
    FragmentDefinition: (node) => ({ ...node, name: { ...node.name, value: fragment(node.name.value) } }),
    FragmentSpread: (node) => ({ ...node, name: { ...node.name, value: fragment(node.name.value) } }),
    OperationDefinition: (node) => ({ ...node, name: { kind: Kind.NAME, value: `${module}${node.name?.value ?? ''}${SUFFIX[node.operation]}` } }),
  });
  return renamed.definitions.map((d: DefinitionNode) => `graphql\`${print(d)}\`;\n`).join('\n');
}

/** A temporary Relay project on the committed schema with these modules; the compiler's exit status and output. */
function compileRelay(modules: Record<string, string>) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docgraph-relay-'));
  fs.mkdirSync(path.join(dir, 'src', '__generated__'), { recursive: true });
  fs.copyFileSync(path.join(ROOT, 'schema.graphql'), path.join(dir, 'schema.graphql'));
  fs.writeFileSync(
    path.join(dir, 'relay.config.json'),
    JSON.stringify({
      src: './src',
      schema: './schema.graphql',
      language: 'javascript',
      artifactDirectory: './src/__generated__',
      // Relay asks for its own `@alias` on a fragment spread inside an inline fragment of a union
      // member (`... on SiteSection { ...Section }`), for its generated types; the directive is
      // Relay's, other clients reject it. The documents are valid GraphQL as they are.
      featureFlags: { enforce_fragment_alias_where_ambiguous: { kind: 'disabled' } },
    }),
  );
  for (const [name, source] of Object.entries(modules)) fs.writeFileSync(path.join(dir, 'src', `${name}.js`), source);
  const bin = require('relay-compiler') as string | null;
  if (!bin) throw new Error(`relay-compiler has no binary for ${process.platform}-${process.arch}`);
  const run = spawnSync(bin, [], { cwd: dir, encoding: 'utf8', timeout: 120_000 });
  // eslint-disable-next-line no-control-regex
  const output = `${run.stdout}${run.stderr}`.replace(/\x1b\[[0-9;]*m/g, '');
  return { dir, status: run.status, output, artifacts: path.join(dir, 'src', '__generated__') };
}

describe('relay-compiler: the README’s and GraphiQL’s examples compile against schema.graphql', () => {
  const readme = readmeDocuments(fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  const explorer = explorerDocuments();
  let compiled: ReturnType<typeof compileRelay>;

  beforeAll(() => {
    const modules: Record<string, string> = {};
    readme.forEach((d, i) => (modules[`Readme${i + 1}`] = relayModule(`Readme${i + 1}`, parse(d))));
    explorer.forEach((d, i) => (modules[`Explorer${i + 1}`] = relayModule(`Explorer${i + 1}`, parse(d))));
    compiled = compileRelay(modules);
  });
  afterAll(() => {
    if (compiled) fs.rmSync(compiled.dir, { recursive: true, force: true });
  });

  it('finds the examples (the flagship query in both, the subscriptions and mutations of the README)', () => {
    const names = (docs: string[]) => docs.flatMap((d) => parse(d).definitions.map((x) => (x.kind === Kind.OPERATION_DEFINITION ? `${x.operation} ${x.name?.value ?? '(anonymous)'}` : `fragment ${(x as { name: { value: string } }).name.value}`)));
    expect(names(readme)).toEqual(expect.arrayContaining(['query SiteStructure', 'subscription (anonymous)', 'mutation (anonymous)']));
    expect(readme.length).toBeGreaterThanOrEqual(5);
    expect(names(explorer)).toEqual(
      expect.arrayContaining(['query SiteStructure', 'query MyOrganizations', 'query SpacesOfOrganization', 'query SpaceWithPages', 'query SitesOfOrganization', 'mutation CreateSpace']),
    );
  });

  it('every example compiles', () => {
    expect(compiled.output).not.toMatch(/\[ERROR\]/);
    expect(compiled.status, compiled.output).toBe(0);
    const artifacts = fs.readdirSync(compiled.artifacts);
    expect(artifacts).toEqual(expect.arrayContaining(['Explorer1SiteStructureQuery.graphql.js', 'Explorer5CreateSpaceMutation.graphql.js', 'Readme1SiteStructureQuery.graphql.js']));
  });

  it('a document that no longer matches the schema fails the compile, naming the field', () => {
    const broken = compileRelay({ Broken: relayModule('Broken', parse('query Q { viewer { user { id displayNameThatWasRemoved } } }')) });
    try {
      expect(broken.status).not.toBe(0);
      expect(broken.output).toContain('displayNameThatWasRemoved');
    } finally {
      fs.rmSync(broken.dir, { recursive: true, force: true });
    }
  });
});

// ------------------------------------------------------------------ a Relay environment on a live app

describe('relay-runtime: the review and site screens in one store', () => {
  let t: TestApp;
  let s: Screens;
  let compiled: ReturnType<typeof compileRelay>;
  const request: Record<string, ConcreteRequest> = {};

  beforeAll(async () => {
    const docs = { MainPane: MAIN_PANE, ChangeRequestPane: CHANGE_REQUEST_PANE, EditorPane: EDITOR_PANE, PreviewPane: PREVIEW_PANE, RenameInChangeRequest: RENAME_IN_CHANGE_REQUEST };
    compiled = compileRelay({ Clients: Object.values(docs).map((d) => relayModule('Clients', parse(d))).join('\n') });
    expect(compiled.status, compiled.output).toBe(0);
    for (const name of Object.keys(docs)) {
      const file = fs.readdirSync(compiled.artifacts).find((f) => f.startsWith(`Clients${name}`))!;
      // Artifacts are ES modules (`export default node`).
      request[name] = ((await import(pathToFileURL(path.join(compiled.artifacts, file)).href)) as { default: ConcreteRequest }).default;
    }
    t = await startTestApp();
    s = await seedScreens(t);
  });
  afterAll(async () => {
    await t?.close();
    if (compiled) fs.rmSync(compiled.dir, { recursive: true, force: true });
  });

  function environment() {
    const network = Network.create(async (params, variables) => {
      const res = await fetch(`${t.baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', authorization: `Bearer ${t.token}` },
        body: JSON.stringify({ query: params.text, variables, operationName: params.name }),
      });
      return res.json();
    });
    return new Environment({ network, store: new Store(new RecordSource()) });
  }

  /** Fetches a pane and keeps it retained (as a mounted component does); returns a reader of what it shows. */
  async function pane(env: InstanceType<typeof Environment>, name: string, variables: Record<string, unknown>) {
    const operation = createOperationDescriptor(request[name], variables);
    env.retain(operation);
    await fetchQuery(env, request[name], variables).toPromise();
    return () => env.lookup(operation.fragment).data as any;
  }

  it('review: the main pane shows "FAQ", the change request pane "FAQ (draft)", in either order, with no warning', async () => {
    for (const order of [['MainPane', 'ChangeRequestPane'], ['ChangeRequestPane', 'MainPane']]) {
      const env = environment();
      const vars: Record<string, Record<string, unknown>> = { MainPane: { space: s.spaceId }, ChangeRequestPane: { space: s.spaceId, cr: s.crNumber } };
      const { result: read, lines } = await consoleDuring(async () => {
        const out: Record<string, () => any> = {};
        for (const name of order) out[name] = await pane(env, name, vars[name]);
        return out;
      });
      expect(lines).toEqual([]);
      expect(titleOf(read.MainPane().space.revision.allPages, s.faqId), order.join(' then ')).toBe('FAQ');
      expect(titleOf(read.ChangeRequestPane().changeRequest.revision.allPages, s.faqId), order.join(' then ')).toBe('FAQ (draft)');
    }
  });

  it('review: a mutation renaming the page in the change request changes the change request pane only', async () => {
    const env = environment();
    const main = await pane(env, 'MainPane', { space: s.spaceId });
    const cr = await pane(env, 'ChangeRequestPane', { space: s.spaceId, cr: s.crNumber });
    try {
      const { lines } = await consoleDuring(
        () =>
          new Promise<void>((resolve, reject) =>
            commitMutation(env, {
              mutation: request.RenameInChangeRequest,
              variables: { input: { spaceId: s.spaceId, changeRequestId: s.changeRequestId, changes: [{ operation: 'update_page', page: s.faqId, title: 'FAQ (second draft)' }] } },
              onCompleted: (_r, errors) => (errors?.length ? reject(new Error(JSON.stringify(errors))) : resolve()),
              onError: reject,
            }),
          ),
      );
      expect(lines).toEqual([]);
      expect(titleOf(cr().changeRequest.revision.allPages, s.faqId)).toBe('FAQ (second draft)');
      expect(titleOf(main().space.revision.allPages, s.faqId)).toBe('FAQ');
    } finally {
      await t.rest('POST', `/v1/spaces/${s.spaceId}/change-requests/${s.changeRequestId}/content`, { changes: [{ operation: 'update_page', page: s.faqId, title: 'FAQ (draft)' }] });
    }
  });

  async function sitePanes(order: string[]) {
    const env = environment();
    const vars: Record<string, Record<string, unknown>> = { EditorPane: { site: s.siteId }, PreviewPane: { site: s.siteId, visitor: NO_CLAIMS } };
    const { result: read, lines } = await consoleDuring(async () => {
      const out: Record<string, () => any> = {};
      for (const name of order) out[name] = await pane(env, name, vars[name]);
      return out;
    });
    return { editor: read.EditorPane().site, preview: read.PreviewPane().site, lines };
  }

  it('site: the editor pane and a visitor preview are two records, each with its own section list', async () => {
    for (const order of [['EditorPane', 'PreviewPane'], ['PreviewPane', 'EditorPane']]) {
      const { editor, preview } = await sitePanes(order);
      expect(editor.id).not.toBe(preview.id);
      expect([editor.siteId, preview.siteId]).toEqual([s.siteId, s.siteId]);
      expect(editor.sections.map((x: any) => x.title), order.join(' then ')).toEqual(['Guides', 'Enterprise']);
      expect(preview.sections.map((x: any) => x.title), order.join(' then ')).toEqual(['Guides']);
    }
  });

  it('site: each section shows the editor every site space with its condition, the preview what the visitor sees, with no warning', async () => {
    for (const order of [['EditorPane', 'PreviewPane'], ['PreviewPane', 'EditorPane']]) {
      const { editor, preview, lines } = await sitePanes(order);
      expect(lines).toEqual([]);
      expect(sectionsShown(editor.sections), order.join(' then ')).toEqual(EDITOR_SHOWS);
      expect(sectionsShown(preview.sections), order.join(' then ')).toEqual(VISITOR_SHOWS);
    }
  });
});
