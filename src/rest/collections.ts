// REST routes for collections, on the GraphQL operations of graphql/collections.ts.
import { z } from 'zod';
import { type RestRoute, listQueryShape, listQuery, q, pageVariables, listEnvelope, compact, CONNECTION_FIELDS } from './router.ts';
import { CreateCollectionInput, UpdateCollectionInput, MoveContentInput, TransferContentInput } from '../domain/collections.ts';
import { SPACE_FIELDS, toRestSpace } from './spaces.ts';

export const COLLECTION_FIELDS = `
  id title description organizationId parentId defaultLevel
  urls { location app }
  permissions { view admin viewInviteLinks create }
`;

export function toRestCollection(c: any) {
  return compact(
    {
      object: 'collection',
      id: c.id,
      title: c.title,
      description: c.description,
      organization: c.organizationId,
      parent: c.parentId,
      defaultLevel: c.defaultLevel,
      urls: c.urls,
      permissions: c.permissions,
    },
    ['defaultLevel'],
  );
}

const payload = `collection { ${COLLECTION_FIELDS} }`;

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/orgs/:organizationId/collections',
    query: z.strictObject({ ...listQueryShape, nested: q.bool() }),
    document: `query($id: ID!, $first: Int, $after: String, $nested: Boolean) { organization(id: $id) { collections(first: $first, after: $after, nested: $nested) { ${CONNECTION_FIELDS} nodes { ${COLLECTION_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.organizationId, ...pageVariables(query), nested: query.nested ?? true }),
    result: (d) => listEnvelope(d.organization.collections, toRestCollection),
  },
  {
    method: 'POST',
    path: '/v1/orgs/:organizationId/collections',
    body: CreateCollectionInput,
    document: `mutation($input: CreateCollectionInput!) { createCollection(input: $input) { ${payload} } }`,
    variables: ({ params, body }) => ({ input: { organizationId: params.organizationId, ...body } }),
    result: (d) => toRestCollection(d.createCollection.collection),
    status: 201,
  },
  {
    method: 'GET',
    path: '/v1/collections/:collectionId',
    document: `query($id: ID!) { collection(id: $id) { ${COLLECTION_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.collectionId }),
    result: (d) => toRestCollection(d.collection),
  },
  {
    method: 'PATCH',
    path: '/v1/collections/:collectionId',
    body: UpdateCollectionInput,
    document: `mutation($input: UpdateCollectionInput!) { updateCollection(input: $input) { ${payload} } }`,
    variables: ({ params, body }) => ({ input: { id: params.collectionId, ...body } }),
    result: (d) => toRestCollection(d.updateCollection.collection),
  },
  {
    method: 'DELETE',
    path: '/v1/collections/:collectionId',
    document: `mutation($input: DeleteCollectionInput!) { deleteCollection(input: $input) { deleted } }`,
    variables: ({ params }) => ({ input: { id: params.collectionId } }),
    status: (d) => (d.deleteCollection.deleted ? 205 : 204),
  },
  {
    method: 'GET',
    path: '/v1/collections/:collectionId/spaces',
    query: listQuery,
    document: `query($id: ID!, $first: Int, $after: String) { collection(id: $id) { spaces(first: $first, after: $after) { ${CONNECTION_FIELDS} nodes { ${SPACE_FIELDS} } } } }`,
    variables: ({ params, query }) => ({ id: params.collectionId, ...pageVariables(query) }),
    result: (d) => listEnvelope(d.collection.spaces, toRestSpace),
  },
  {
    method: 'POST',
    path: '/v1/collections/:collectionId/move',
    body: MoveContentInput,
    document: `mutation($input: MoveCollectionInput!) { moveCollection(input: $input) { ${payload} } }`,
    variables: ({ params, body }) => ({ input: { id: params.collectionId, ...body } }),
    result: (d) => toRestCollection(d.moveCollection.collection),
  },
  {
    method: 'POST',
    path: '/v1/collections/:collectionId/transfer',
    body: TransferContentInput,
    document: `mutation($input: TransferCollectionInput!) { transferCollection(input: $input) { ${payload} } }`,
    variables: ({ params, body }) => ({ input: { id: params.collectionId, organization: body.organization } }),
    result: (d) => toRestCollection(d.transferCollection.collection),
  },
];
