import { describe, expect, it } from 'vitest';
import { parseOpenApi } from '../../src/lib/openapi-parse.ts';

const noFetch = async (url: string): Promise<string> => {
  throw new Error(`unexpected fetch ${url}`);
};
const v3 = { openapi: '3.0.3', info: { title: 'Pets', version: '1.0.0' }, paths: { '/pets': { get: { responses: { '200': { description: 'ok' } } } } } };

describe('parseOpenApi', () => {
  it('accepts OpenAPI 3 in JSON and YAML, and Swagger 2.0', async () => {
    const json = await parseOpenApi(JSON.stringify(v3), 'https://example.com/api.json', noFetch);
    expect(json).toMatchObject({ ok: true, title: 'Pets', version: '1.0.0', entry: 'https://example.com/api.json' });
    const yaml = await parseOpenApi('openapi: 3.0.3\ninfo:\n  title: Pets\n  version: "1.0.0"\npaths: {}\n', undefined, noFetch);
    expect(yaml.ok).toBe(true);
    const swagger = await parseOpenApi(JSON.stringify({ swagger: '2.0', info: { title: 'Old', version: '1' }, paths: {} }), undefined, noFetch);
    expect(swagger).toMatchObject({ ok: true, title: 'Old' });
  });

  it('rejects garbage and invalid documents with PARSE_ERROR', async () => {
    expect(await parseOpenApi('{ not json', undefined, noFetch)).toMatchObject({ ok: false, code: 'PARSE_ERROR' });
    expect(await parseOpenApi(JSON.stringify({ openapi: '3.0.3', paths: {} }), undefined, noFetch)).toMatchObject({ ok: false, code: 'PARSE_ERROR' });
    expect(await parseOpenApi('just a string', undefined, noFetch)).toMatchObject({ ok: false, code: 'PARSE_ERROR' });
  });

  it('fetches external refs into the filesystem, relative to the source', async () => {
    const api = { ...v3, components: { schemas: { Pet: { $ref: 'schemas/pet.yaml' } } } };
    const fetched: string[] = [];
    const r = await parseOpenApi(JSON.stringify(api), 'https://example.com/specs/api.json', async (url) => {
      fetched.push(url);
      return 'type: object\nproperties:\n  name: { type: string }\n';
    });
    expect(r.ok).toBe(true);
    expect(fetched).toEqual(['https://example.com/specs/schemas/pet.yaml']);
    if (r.ok) expect(Object.keys(r.filesystem).sort()).toEqual(['https://example.com/specs/api.json', 'https://example.com/specs/schemas/pet.yaml']);
  });

  it('hashes content, not key order', async () => {
    const a = await parseOpenApi(JSON.stringify(v3), 'https://x/a.json', noFetch);
    const reordered = { paths: v3.paths, info: { version: '1.0.0', title: 'Pets' }, openapi: '3.0.3' };
    const b = await parseOpenApi(JSON.stringify(reordered), 'https://x/a.json', noFetch);
    const c = await parseOpenApi(JSON.stringify({ ...v3, info: { ...v3.info, version: '2.0.0' } }), 'https://x/a.json', noFetch);
    expect(a.ok && b.ok && a.hash === b.hash).toBe(true);
    expect(a.ok && c.ok && a.hash !== c.hash).toBe(true);
  });

  it('lets fetch failures of references through to the caller', async () => {
    const api = { ...v3, components: { schemas: { Pet: { $ref: 'https://example.com/missing.yaml' } } } };
    await expect(parseOpenApi(JSON.stringify(api), 'https://example.com/api.json', async () => { throw new Error('HTTP 404'); })).rejects.toThrow('HTTP 404');
  });
});
