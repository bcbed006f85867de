// Translation settings of an organization: a title and the languages content is translated into.
// Reads are for members with a role (not guests); writes are for organization admins. Both rules
// are rows of the access table (`translations:read`, `translations:write` in src/auth/access.ts),
// which also computes `permissions`.
import { z } from 'zod';
import type { DomainContext } from './context.ts';
import { parseInput, notFound } from '../lib/errors.ts';
import { newId } from '../lib/ids.ts';
import { transaction } from '../db/transaction.ts';
import { recordEvent } from '../events/log.ts';

export const TranslationSettingsTitle = z.string().trim().min(1).max(100);

/**
 * BCP 47 language tags, validated and canonicalized with `Intl.getCanonicalLocales`
 * (`en-us` → `en-US`), duplicates removed, order kept.
 */
export const TranslationLanguages = z
  .array(z.string().trim().min(1).max(64))
  .max(200)
  .transform((tags, zctx) => {
    const out: string[] = [];
    for (const [i, tag] of tags.entries()) {
      let canonical: string;
      try {
        [canonical] = Intl.getCanonicalLocales(tag);
      } catch {
        zctx.addIssue({ code: 'custom', path: [i], message: `"${tag}" is not a valid BCP 47 language tag` });
        return z.NEVER;
      }
      if (!out.includes(canonical)) out.push(canonical);
    }
    return out;
  });

export const CreateTranslationSettingsInput = z.strictObject({
  title: TranslationSettingsTitle,
  /** Not in the seed's body (which names only `title`): a documented extension. */
  languages: TranslationLanguages.optional(),
});
export type CreateTranslationSettingsInput = z.infer<typeof CreateTranslationSettingsInput>;

/** PUT replaces the settings: `title` is required; `languages`, when omitted, is kept. */
export const UpdateTranslationSettingsInput = CreateTranslationSettingsInput;
export type UpdateTranslationSettingsInput = z.infer<typeof UpdateTranslationSettingsInput>;

/** What the caller may do with an organization's translation settings (same rule as enforcement). */
export async function translationSettingsPermissions(ctx: DomainContext, organizationId: string) {
  const [view, edit] = await Promise.all([ctx.access.canOrg(organizationId, 'translations:read'), ctx.access.canOrg(organizationId, 'translations:write')]);
  return { view, edit };
}

/** Access check for listing an organization's translation settings. */
export async function requireTranslationsRead(ctx: DomainContext, organizationId: string) {
  await ctx.access.requireOrg(organizationId, 'translations:read');
}

export async function getTranslationSettings(ctx: DomainContext, organizationId: string, id: string) {
  await requireTranslationsRead(ctx, organizationId);
  const settings = await ctx.prisma.translationSettings.findFirst({ where: { id, organizationId } });
  if (!settings) throw notFound('Translation settings');
  return settings;
}

export async function createTranslationSettings(ctx: DomainContext, organizationId: string, rawInput: unknown) {
  await ctx.access.requireOrg(organizationId, 'translations:write');
  const input = parseInput(CreateTranslationSettingsInput, rawInput);
  const now = ctx.clock.now();
  return transaction(ctx.prisma, async (tx) => {
    const settings = await tx.translationSettings.create({
      data: {
        id: newId('TranslationSettings'),
        organizationId,
        title: input.title,
        languages: input.languages ?? [],
        createdAt: now,
        updatedAt: now,
      },
    });
    await recordEvent(tx, ctx, { type: 'translation_created', organizationId, objectId: settings.id, payload: { title: settings.title, languages: settings.languages } });
    return settings;
  });
}

export async function updateTranslationSettings(ctx: DomainContext, organizationId: string, id: string, rawInput: unknown) {
  await ctx.access.requireOrg(organizationId, 'translations:write');
  const input = parseInput(UpdateTranslationSettingsInput, rawInput);
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.translationSettings.updateMany({
      where: { id, organizationId },
      data: {
        title: input.title,
        ...(input.languages !== undefined ? { languages: input.languages } : {}),
        updatedAt: ctx.clock.now(),
      },
    });
    if (r.count === 0) throw notFound('Translation settings');
    const settings = await tx.translationSettings.findUniqueOrThrow({ where: { id } });
    await recordEvent(tx, ctx, { type: 'translation_updated', organizationId, objectId: id, payload: { title: settings.title, languages: settings.languages } });
    return settings;
  });
}

/** Idempotent: true when deleted, false when it did not exist (the organization must). */
export async function deleteTranslationSettings(ctx: DomainContext, organizationId: string, id: string) {
  await ctx.access.requireOrg(organizationId, 'translations:write');
  return transaction(ctx.prisma, async (tx) => {
    const r = await tx.translationSettings.deleteMany({ where: { id, organizationId } });
    if (r.count > 0) await recordEvent(tx, ctx, { type: 'translation_deleted', organizationId, objectId: id });
    return r.count > 0;
  });
}
