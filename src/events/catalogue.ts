// The event catalogue: every event type the log records, with the object it is about, what it
// means and its payload. The house's fourth table, beside the REST route table
// (src/rest/index.ts), the task table (src/tasks.ts) and the organization actions
// (src/auth/access.ts). A new event adds a row here; `recordEvent` (src/events/log.ts) takes only
// these names and checks the payload against the row's schema at compile time. The GraphQL
// `EventType` enum, the webhooks' `eventTypes` validation and the README's list come from it.
//
// Names follow GitBook's event words where they exist (`space_content_updated`, `page_created`…),
// the same style otherwise (`space_created`, `change_request_merged`, `site_published`). Payloads
// are small: ids, titles, revision ids, never page bodies. A type once written stays here (the log
// keeps it until retention removes it): retire one with `deprecated`, never by deleting its row.
import { z } from 'zod';

/** The object types events name (`Event.objectType`). */
export const EVENT_OBJECT_TYPES = [
  'organization',
  'member',
  'invite',
  'team',
  'collection',
  'space',
  'change_request',
  'comment',
  'comment_reply',
  'site',
  'site_section',
  'site_section_group',
  'site_space',
  'share_link',
  'saml_provider',
  'openapi_spec',
  'translation',
  'import',
  'webhook',
] as const;
export type EventObjectType = (typeof EVENT_OBJECT_TYPES)[number];

export type EventDefinition = {
  object: EventObjectType;
  description: string;
  /** The JSON payload as stored (ids, titles, counts; never bodies). */
  payload: z.ZodObject;
  /** Set on a type no longer written (kept so old rows stay readable). */
  deprecated?: string;
};

// ------------------------------------------------------------------ payload pieces

const id = z.string();
const nullableId = z.string().nullable();
const fields = z.array(z.string());
const empty = z.object({});
const titled = z.object({ title: z.string() });
const titledFields = z.object({ title: z.string(), fields });
const role = z.string();
const site = z.object({ siteId: id });
const moved = z.object({ fromParentId: nullableId, parentId: nullableId, position: z.number() });
const transferred = z.object({ fromOrganizationId: id, organizationId: id, spaceIds: z.array(id) });
const redirect = z.object({ redirectId: id, source: z.string() });
const visitorKey = z.object({ keyId: id, algorithm: z.string() });
const comment = z.object({ spaceId: id, changeRequestId: nullableId, commentId: id.optional(), pageId: nullableId });
const changeRequest = z.object({ spaceId: id, number: z.number(), subject: z.string().nullable(), status: z.string(), previousStatus: z.string() });
const contentUpdated = z.object({
  revisionId: id,
  previousRevisionId: nullableId,
  /** Content edits: how many changes the batch held. */
  changes: z.number().optional(),
  /** A merge: the change request merged. */
  changeRequestId: id.optional(),
  /** An import: its job. */
  importId: id.optional(),
});
const importStep = z.object({ spaceId: id, changeRequestId: nullableId, givenUp: z.boolean().optional() });
const anchor = z.object({ type: z.string(), id });
/** Where a structure item was placed: before or after a sibling (null: the end). */
const placement = z.object({ before: anchor.optional(), after: anchor.optional() }).nullable();
const structureMoved = site.extend({ position: placement });
const shareLink = site.extend({ name: z.string().nullable().optional(), active: z.boolean().optional() });
const openApi = z.object({ slug: z.string() });
const webhook = z.object({ eventTypes: z.array(z.string()), active: z.boolean() });
const teamMembers = z.object({ added: z.array(z.object({ userId: id, role: z.string().optional() })), removed: z.array(id) });

function row(object: EventObjectType, description: string): { object: EventObjectType; description: string; payload: typeof empty };
function row<P extends z.ZodObject>(object: EventObjectType, description: string, payload: P): { object: EventObjectType; description: string; payload: P };
function row(object: EventObjectType, description: string, payload: z.ZodObject = empty) {
  return { object, description, payload };
}

// ------------------------------------------------------------------ the catalogue

export const EVENTS = {
  organization_created: row('organization', 'An organization was created (the admin command line).', titled),
  organization_updated: row('organization', 'An organization’s settings changed.', titledFields),
  invite_deleted: row('invite', 'A pending invitation was withdrawn.'),

  member_added: row('member', 'A user joined the organization (an accepted invitation, SSO, the command line); the object id is the user id.', z.object({ role: role.nullable() })),
  member_role_updated: row('member', 'A member’s organization role changed.', z.object({ role: role.nullable(), previousRole: role.nullable() })),
  member_removed: row('member', 'A member left or was removed from the organization.', z.object({ role: role.nullable() })),
  member_sso_updated: row('member', 'A member’s SSO setting changed.', z.object({ sso: z.boolean() })),

  team_created: row('team', 'A team was created.', z.object({ title: z.string(), members: z.array(id) })),
  team_updated: row('team', 'A team was renamed.', titled),
  team_deleted: row('team', 'A team was deleted.', titled),
  team_members_updated: row('team', 'Members were added to or removed from a team.', teamMembers),

  collection_created: row('collection', 'A collection was created.', z.object({ title: z.string(), parentId: nullableId })),
  collection_updated: row('collection', 'A collection’s settings changed.', titledFields),
  collection_deleted: row('collection', 'A collection was deleted.', titled),
  collection_moved: row('collection', 'A collection moved to another parent or position.', moved),
  collection_transferred: row('collection', 'A collection moved to another organization (recorded in both).', transferred),

  space_created: row('space', 'A space was created or duplicated.', z.object({ title: z.string(), parentId: nullableId, revisionId: id, duplicatedFrom: id.optional() })),
  space_updated: row('space', 'A space’s settings changed (title, visibility, edit mode…).', titledFields),
  space_deleted: row('space', 'A space was deleted (restorable for 7 days).', titled),
  space_restored: row('space', 'A deleted space was restored.', titled),
  space_moved: row('space', 'A space moved to another parent or position.', moved),
  space_transferred: row('space', 'A space moved to another organization (recorded in both).', transferred),
  space_content_updated: row('space', 'New content in a space: an edit, a merged change request or an import.', contentUpdated),

  change_request_opened: row('change_request', 'A change request was opened.', z.object({ spaceId: id, number: z.number(), subject: z.string().nullable(), status: z.string() })),
  change_request_updated: row('change_request', 'A change request’s subject changed.', changeRequest),
  change_request_status_updated: row('change_request', 'A change request’s status changed (draft, open, archived).', changeRequest),
  change_request_content_updated: row(
    'change_request',
    'New content in a change request: an edit, an update from main or an import.',
    z.object({ spaceId: id, number: z.number().optional(), revisionId: id, previousRevisionId: nullableId, fromMainRevisionId: nullableId.optional(), importId: id.optional() }),
  ),
  change_request_merged: row('change_request', 'A change request was merged into its space.', z.object({ spaceId: id, number: z.number(), subject: z.string().nullable(), revisionId: id })),

  comment_posted: row('comment', 'A comment thread was started.', comment),
  comment_updated: row('comment', 'A comment was edited.', comment),
  comment_resolved: row('comment', 'A comment thread was resolved.', comment),
  comment_reopened: row('comment', 'A resolved comment thread was reopened.', comment),
  comment_deleted: row('comment', 'A comment thread was deleted.', comment),
  comment_reply_posted: row('comment_reply', 'A reply was posted to a comment.', comment),
  comment_reply_updated: row('comment_reply', 'A reply was edited.', comment),
  comment_reply_resolved: row('comment_reply', 'A reply was marked resolved.', comment),
  comment_reply_reopened: row('comment_reply', 'A resolved reply was reopened.', comment),
  comment_reply_deleted: row('comment_reply', 'A reply was deleted.', comment),

  import_started: row('import', 'An import job was queued.', z.object({ spaceId: id, changeRequestId: nullableId, importSource: z.string() })),
  import_running: row('import', 'An import job started running.', importStep),
  import_completed: row('import', 'An import job finished: its content is in the space or change request.', importStep.extend({ revisionId: id, importedResources: z.number() })),
  import_failed: row('import', 'An import job failed (for good with `givenUp`).', importStep),

  site_created: row('site', 'A site was created.', z.object({ title: z.string(), spaceIds: z.array(id) })),
  site_updated: row('site', 'A site’s settings changed.', titledFields),
  site_deleted: row('site', 'A site was deleted.'),
  site_published: row('site', 'A site was published.', titled),
  site_unpublished: row('site', 'A site was unpublished.', titled),
  site_adaptive_schema_updated: row('site', 'A site’s adaptive content schema (visitor claims) changed.'),
  site_publishing_auth_updated: row('site', 'A site’s visitor authentication settings changed.', z.object({ backend: z.string().nullable(), fields, keyCreated: z.boolean() })),
  site_visitor_key_regenerated: row('site', 'A site’s visitor signing secret was regenerated.', visitorKey),
  site_visitor_public_key_set: row('site', 'A public key for visitor tokens was set on a site.', visitorKey),
  site_visitor_public_key_removed: row('site', 'A site’s public keys for visitor tokens were removed.', z.object({ keys: z.number() })),
  site_redirect_created: row('site', 'A redirect was added to a site.', redirect),
  site_redirect_updated: row('site', 'A site redirect changed.', redirect),
  site_redirect_deleted: row('site', 'A site redirect was removed.', redirect),
  site_redirects_upserted: row('site', 'A site’s redirects were written in one batch.', z.object({ created: z.number(), updated: z.number(), deleted: z.number() })),

  site_section_created: row('site_section', 'A section was added to a site.', site.extend({ title: z.string(), spaceId: id, siteSpaceId: id })),
  site_section_updated: row('site_section', 'A site section changed.', site.extend({ title: z.string(), fields })),
  site_section_deleted: row('site_section', 'A site section was removed.', site),
  site_section_moved: row('site_section', 'A site section moved (into or out of a group, or to another position).', site.extend({ groupId: nullableId.optional(), fromGroupId: nullableId.optional(), position: placement.optional() })),
  site_section_group_created: row('site_section_group', 'A section group was added to a site.', site.extend({ title: z.string(), sections: z.array(id) })),
  site_section_group_updated: row('site_section_group', 'A site section group changed.', site.extend({ title: z.string(), fields })),
  site_section_group_deleted: row('site_section_group', 'A site section group was removed.', site),
  site_section_group_moved: row('site_section_group', 'A site section group moved to another position.', structureMoved),
  site_space_created: row('site_space', 'A space was added to a site.', site.extend({ spaceId: id, sectionId: nullableId })),
  site_space_updated: row('site_space', 'A site space changed.', site.extend({ spaceId: id, sectionId: nullableId, fields })),
  site_space_deleted: row('site_space', 'A space was removed from a site.', site.extend({ spaceId: id, sectionId: nullableId })),
  site_space_moved: row('site_space', 'A site space moved (to another section or position).', structureMoved),

  share_link_created: row('share_link', 'A share link was created for a site.', shareLink),
  share_link_updated: row('share_link', 'A share link changed (name, active).', shareLink),
  share_link_deleted: row('share_link', 'A share link was deleted.', shareLink),

  saml_provider_created: row('saml_provider', 'A SAML identity provider was added.', titled),
  saml_provider_updated: row('saml_provider', 'A SAML identity provider changed.', titledFields),
  saml_provider_deleted: row('saml_provider', 'A SAML identity provider was removed.'),

  openapi_spec_created: row('openapi_spec', 'An OpenAPI specification was added.', openApi),
  openapi_spec_updated: row('openapi_spec', 'An OpenAPI specification’s source changed.', openApi),
  openapi_spec_deleted: row('openapi_spec', 'An OpenAPI specification was deleted.', openApi),
  openapi_spec_processing_started: row('openapi_spec', 'Processing of an OpenAPI specification started (a background job).', openApi),
  openapi_spec_processed: row(
    'openapi_spec',
    'Processing of an OpenAPI specification ended: a version, or an error code.',
    openApi.extend({ versionId: nullableId.optional(), newVersion: z.boolean().optional(), errorCode: z.string().optional(), givenUp: z.boolean().optional() }),
  ),

  translation_created: row('translation', 'A translation of a site was set up.', z.object({ title: z.string(), languages: z.array(z.string()) })),
  translation_updated: row('translation', 'A translation’s settings changed.', z.object({ title: z.string(), languages: z.array(z.string()) })),
  translation_deleted: row('translation', 'A translation was removed.'),

  webhook_created: row('webhook', 'A webhook was registered (a webhook subscribed to it receives its own first, as a ping).', webhook),
  webhook_updated: row('webhook', 'A webhook’s URL, event types or state changed.', webhook.extend({ urlChanged: z.boolean() })),
  webhook_secret_rotated: row('webhook', 'A webhook’s signing secret was rotated.', z.object({ expiresInHours: z.number(), previousSecretExpiresAt: z.string().nullable() })),
  webhook_deleted: row('webhook', 'A webhook was deleted.'),
} satisfies Record<string, EventDefinition>;

export type EventType = keyof typeof EVENTS;

/** Every event type, in catalogue order. */
export const EVENT_TYPES = Object.keys(EVENTS) as [EventType, ...EventType[]];

/** The payload a recorder gives for `type` (undefined keys are dropped). */
export type EventPayload<K extends EventType> = z.input<(typeof EVENTS)[K]['payload']>;

/** The catalogue row of `type`, or undefined for a name it does not hold. */
export function eventDefinition(type: string): EventDefinition | undefined {
  return Object.hasOwn(EVENTS, type) ? (EVENTS as Record<string, EventDefinition>)[type] : undefined;
}

export const isEventType = (type: string): type is EventType => eventDefinition(type) !== undefined;

/** A list of event types from a client: each a catalogue name (400 naming `<field>.<i>` otherwise), without duplicates. */
export const EventTypeList = z
  .array(z.enum(EVENT_TYPES, { error: (iss) => `unknown event type ${JSON.stringify(iss.input)}: use a type of the event catalogue, such as space_created` }))
  .max(100)
  .transform((types) => [...new Set(types)]);
