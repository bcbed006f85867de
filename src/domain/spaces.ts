// Spaces: creation (not in the seeds: `createSpace` / `POST ORG/spaces`), reading with access
// checks. Further space operations (update, delete, restore, move, transfer, duplicate) live here
// too.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import type { Space } from '../generated/prisma/client.ts';
import { newId } from './ids.ts';
import { parseInput, notFound, badRequest } from './errors.ts';
import { createInitialRevision } from './revisions.ts';
import { RoleOrGuest } from './users.ts';

export const SPACE_VISIBILITIES = ['public', 'unlisted', 'share-link', 'visitor-auth', 'in-collection', 'private'] as const;
/** Contract value (`share-link`) → database enum (`share_link`). */
export const visibilityToDb = (v: (typeof SPACE_VISIBILITIES)[number]) => v.replace(/-/g, '_') as Space['visibility'];

export const SpaceTitle = z.string().trim().max(50);
export const SpaceEmoji = z.string().max(50);

export const CreateSpaceInput = z.strictObject({
  title: SpaceTitle.optional(),
  emoji: SpaceEmoji.optional(),
  visibility: z.enum(SPACE_VISIBILITIES).optional(),
  parent: z.string().min(1).optional(),
  defaultLevel: RoleOrGuest.optional(),
});

/** Load a space the caller may see (404 otherwise, deleted ones included only on request). */
export async function getSpace(ctx: DomainContext, id: string, opts: { includeDeleted?: boolean } = {}): Promise<Space> {
  const space = await ctx.prisma.space.findUnique({ where: { id } });
  await ctx.access.requireSpace(space, 'read', opts);
  return space!;
}

/** Create a space with an empty first revision, at the end of its parent. Needs `create` in the org. */
export async function createSpace(ctx: DomainContext, organizationId: string, raw: unknown): Promise<Space> {
  const viewer = ctx.access.requireViewer();
  await ctx.access.requireOrganization(organizationId, 'create');
  const input = parseInput(CreateSpaceInput, raw);
  return ctx.prisma.$transaction(async (tx) => {
    let ancestorIds: string[] = [];
    if (input.parent) {
      const parent = await tx.collection.findFirst({ where: { id: input.parent, organizationId } });
      if (!parent) throw badRequest('parent', 'no such collection in this organization');
      await ctx.access.requireCollection(parent, 'create');
      ancestorIds = [...parent.ancestorIds, parent.id];
    }
    if (input.visibility === 'in-collection' && !input.parent) throw badRequest('visibility', 'in-collection needs a parent collection');
    const last = await tx.space.aggregate({ where: { organizationId, parentId: input.parent ?? null }, _max: { position: true } });
    const id = newId('Space');
    await tx.space.create({
      data: {
        id,
        organizationId,
        parentId: input.parent ?? null,
        ancestorIds,
        title: input.title ?? 'Untitled',
        emoji: input.emoji ?? null,
        visibility: input.visibility ? visibilityToDb(input.visibility) : 'private',
        defaultLevel: input.defaultLevel ?? null,
        position: (last._max.position ?? -1) + 1,
      },
    });
    const revision = await createInitialRevision(tx, id, viewer.user.id);
    return tx.space.update({ where: { id }, data: { revisionId: revision.id } });
  });
}

export async function requireSpaceById(ctx: DomainContext, id: string, min: Parameters<DomainContext['access']['requireSpace']>[1] = 'read') {
  const space = await ctx.prisma.space.findUnique({ where: { id } });
  if (!space) throw notFound('Space');
  await ctx.access.requireSpace(space, min);
  return space;
}
