// Stored bytes no row refers to (a rolled-back upload, a purge that died between deleting rows
// and bytes) are swept once they are older than the grace period; bytes a file or a PDF export
// refers to never are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers.ts';
import { sweepOrphanFiles, ORPHAN_GRACE_MS } from '../src/domain/cleanup.ts';
import { applyChanges } from '../src/domain/revisions.ts';
import { renderPdfExportTask } from '../src/domain/pdf-exports.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t?.close();
});

const keys = async () => {
  const out: string[] = [];
  for await (const { key } of t.app.services.storage.list()) out.push(key);
  return out.sort();
};

describe('the orphaned bytes sweep', () => {
  it('removes unreferenced bytes after the grace period and keeps every referenced file and PDF', async () => {
    const spaceId = (await t.rest('POST', `/v1/orgs/${t.org.id}/spaces`, { title: 'Files' })).body.id;
    const space = await t.app.prisma.space.findUniqueOrThrow({ where: { id: spaceId } });
    const { insertedFiles } = await t.app.prisma.$transaction(async (tx) => {
      const r = await applyChanges(tx, {
        spaceId,
        baseRevisionId: space.revisionId!,
        changes: [{ operation: 'insert_files', files: [{ name: 'a.txt', contentType: 'text/plain', base64: Buffer.from('kept').toString('base64') }] }],
        createdById: t.adminUser.id,
        storage: t.app.services.storage,
      });
      await tx.space.update({ where: { id: spaceId }, data: { revisionId: r.revision.id } });
      return r;
    });
    const cr = (await t.rest('POST', `/v1/spaces/${spaceId}/change-requests`, { subject: 'PDF' })).body;
    expect((await t.rest('GET', `/v1/spaces/${spaceId}/change-requests/${cr.id}/pdf`)).status).toBe(200);
    // The export's job (no worker in this file): renders and stores the PDF.
    const exported = await t.app.prisma.pdfExport.findFirstOrThrow({ where: { changeRequestId: cr.id } });
    await renderPdfExportTask({ exportId: exported.id }, { prisma: t.app.prisma, config: t.app.config, clock: t.clock, log: t.app.log, services: t.app.services });

    // An upload whose transaction rolled back: the bytes were written, the row never committed.
    await expect(
      t.app.prisma.$transaction(async (tx) => {
        await applyChanges(tx, {
          spaceId,
          baseRevisionId: space.revisionId!,
          changes: [{ operation: 'insert_files', files: [{ name: 'b.txt', contentType: 'text/plain', base64: Buffer.from('lost').toString('base64') }] }],
          createdById: t.adminUser.id,
          storage: t.app.services.storage,
        });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    // Leftovers of a purge and of an interrupted write, and a key outside the swept prefixes.
    await t.app.services.storage.put('pdf/cr_gone.pdf', Buffer.from('%PDF'), 'application/pdf');
    await t.app.services.storage.put('files/space_gone/file_gone', Buffer.from('x'), 'text/plain');
    await t.app.services.storage.put('files/space_gone/file_gone.123.tmp', Buffer.from('x'), 'text/plain');
    await t.app.services.storage.put('other/keep', Buffer.from('x'), 'text/plain');

    const before = await keys();
    expect(before).toHaveLength(7);
    const file = await t.app.prisma.file.findUniqueOrThrow({ where: { id: insertedFiles[0].id } });
    const pdfKey = (await t.app.prisma.pdfExport.findUniqueOrThrow({ where: { id: exported.id } })).storageKey!;
    const deps = { prisma: t.app.prisma, clock: t.clock, log: t.app.log, services: t.app.services };

    // Young bytes are left alone, whatever refers to them.
    expect(await sweepOrphanFiles(deps)).toBe(0);
    expect(await keys()).toEqual(before);

    t.clock.advance(ORPHAN_GRACE_MS + 60_000);
    expect(await sweepOrphanFiles(deps)).toBe(4);
    expect(await keys()).toEqual([file.storageKey, pdfKey, 'other/keep'].sort());
    // What is kept still downloads.
    const download = await fetch(`${t.baseUrl}/files/${file.id}`, { headers: { authorization: `Bearer ${t.token}` } });
    expect(await download.text()).toBe('kept');
    // Idempotent: a second run finds nothing.
    expect(await sweepOrphanFiles(deps)).toBe(0);
  });
});
