// REST routes for spaces, on the GraphQL operations of graphql/spaces.ts.
import { z } from 'zod';
import { type RestRoute, compact, restEnum, contractEnum, listQuery, pageVariables, listEnvelope, CONNECTION_FIELDS } from './router.ts';
import { CreateSpaceInput, SPACE_VISIBILITIES, UpdateSpaceInput } from '../domain/spaces.ts';
import { MoveContentInput, TransferContentInput } from '../domain/collections.ts';

export const SPACE_FIELDS = `
  id: spaceId title emoji icon visibility editMode createdAt updatedAt deletedAt organizationId parentId revisionId
  defaultLevel commentCount changeRequests changeRequestsOpen changeRequestsDraft
  urls { location app published public icon }
  permissions { view access admin viewInviteLinks edit triggerGitSync comment merge review }
`;

/**
 * A space as published content shows it (the published reads `…/published` and `…/structure`):
 * only what the site's structure version covers, so the answer is every reader's and the
 * published cache serves it (src/http/published-cache.ts CACHEABLE_FIELDS). No counters (0) and
 * the permissions of a reader of published content (`PUBLISHED_READER_PERMISSIONS`), whoever asks:
 * a member's own counters and permissions are `GET /v1/spaces/{spaceId}`'s.
 */
export const PUBLISHED_SPACE_FIELDS = `
  id: spaceId title emoji icon visibility editMode createdAt updatedAt deletedAt organizationId parentId revisionId
  defaultLevel urls { location app published public icon }
`;

/** What a reader of published content may do with a space it shows: view it. */
export const PUBLISHED_READER_PERMISSIONS = Object.freeze({
  view: true, access: false, admin: false, viewInviteLinks: false, edit: false, triggerGitSync: false, comment: false, merge: false, review: false,
});

export function toRestSpace(s: any) {
  return compact(
    {
      object: 'space',
      id: s.id,
      // `type` is required by the OpenAPI document without being declared (contract notes).
      type: 'space',
      title: s.title,
      emoji: s.emoji ?? '',
      visibility: restEnum(s.visibility),
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
      deletedAt: s.deletedAt,
      editMode: s.editMode,
      urls: compact(s.urls),
      organization: s.organizationId,
      parent: s.parentId,
      revision: s.revisionId,
      defaultLevel: s.defaultLevel,
      // The contract requires numbers; a reader without a role on the space gets 0 (GraphQL: null).
      comments: s.commentCount ?? 0,
      changeRequests: s.changeRequests ?? 0,
      changeRequestsOpen: s.changeRequestsOpen ?? 0,
      changeRequestsDraft: s.changeRequestsDraft ?? 0,
      permissions: s.permissions ?? PUBLISHED_READER_PERMISSIONS,
    },
    ['defaultLevel'],
  );
}

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/spaces/:spaceId',
    query: z.strictObject({ shareKey: z.string().max(512).optional() }),
    document: `query($id: ID!, $shareKey: String) { space(id: $id, shareKey: $shareKey) { ${SPACE_FIELDS} } }`,
    variables: ({ params, query }) => ({ id: params.spaceId, shareKey: query.shareKey ?? null }),
    result: (d) => toRestSpace(d.space),
  },
  {
    method: 'POST',
    path: '/v1/orgs/:organizationId/spaces',
    body: CreateSpaceInput.extend({ visibility: contractEnum(SPACE_VISIBILITIES).optional() }),
    document: `mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({
      input: { organizationId: params.organizationId, ...body },
    }),
    result: (d) => toRestSpace(d.createSpace.space),
    status: 201,
  },
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/spaces',
    query: listQuery,
    document: `query($id: ID!, $first: Int, $after: String) { organization(id: $id) { spaces(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${SPACE_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.organizationId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.organization.spaces, toRestSpace),
  },
  {
    method: 'PATCH',
    path: '/v1/spaces/:spaceId',
    body: UpdateSpaceInput,
    document: `mutation($input: UpdateSpaceInput!) { updateSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { id: params.spaceId, ...body } }),
    result: (d) => toRestSpace(d.updateSpace.space),
  },
  {
    method: 'DELETE',
    path: '/v1/spaces/:spaceId',
    document: `mutation($input: DeleteSpaceInput!) { deleteSpace(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { id: params.spaceId } }),
    status: (d) => (d.deleteSpace.deleted ? 205 : 204),
  },
  {
    method: 'POST',
    path: '/v1/spaces/:spaceId/restore',
    document: `mutation($input: RestoreSpaceInput!) { restoreSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params }) => ({ input: { id: params.spaceId } }),
    result: (d) => toRestSpace(d.restoreSpace.space),
  },
  {
    method: 'POST',
    path: '/v1/spaces/:spaceId/duplicate',
    document: `mutation($input: DuplicateSpaceInput!) { duplicateSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params }) => ({ input: { id: params.spaceId } }),
    result: (d) => toRestSpace(d.duplicateSpace.space),
    status: 201,
  },
  {
    method: 'POST',
    path: '/v1/spaces/:spaceId/move',
    body: MoveContentInput,
    document: `mutation($input: MoveSpaceInput!) { moveSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { id: params.spaceId, ...body } }),
    result: (d) => toRestSpace(d.moveSpace.space),
  },
  {
    method: 'POST',
    path: '/v1/spaces/:spaceId/transfer',
    body: TransferContentInput,
    document: `mutation($input: TransferSpaceInput!) { transferSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({ input: { id: params.spaceId, organization: body.organization } }),
    result: (d) => toRestSpace(d.transferSpace.space),
  },
];
