// REST routes for spaces, on the GraphQL operations of graphql/spaces.ts.
import { z } from 'zod';
import { type RestRoute, compact, restEnum } from './router.ts';
import { CreateSpaceInput } from '../domain/spaces.ts';

export const SPACE_FIELDS = `
  id title emoji icon visibility editMode createdAt updatedAt deletedAt organizationId parentId revisionId
  defaultLevel comments changeRequests changeRequestsOpen changeRequestsDraft
  urls { location app published public icon }
  permissions { view access admin viewInviteLinks edit triggerGitSync comment merge review }
`;

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
      comments: s.comments,
      changeRequests: s.changeRequests,
      changeRequestsOpen: s.changeRequestsOpen,
      changeRequestsDraft: s.changeRequestsDraft,
      permissions: s.permissions,
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
    body: CreateSpaceInput,
    document: `mutation($input: CreateSpaceInput!) { createSpace(input: $input) { space { ${SPACE_FIELDS} } } }`,
    variables: ({ params, body }) => ({
      input: { organizationId: params.organizationId, ...body, visibility: body.visibility?.replace(/-/g, '_') },
    }),
    result: (d) => toRestSpace(d.createSpace.space),
    status: 201,
  },
];
