// The REST representation of a user, shared by every area that embeds one, and the user routes
// (`getAuthenticatedUser`, `getUserById`), so every embedded user's `urls.location` resolves.
import { z } from 'zod';
import { type RestRoute, compact } from './router.ts';

export const USER_FIELDS = 'id displayName email photoURL urls { location }';

export function toRestUser(u: any) {
  return compact({ object: 'user', id: u.id, displayName: u.displayName, email: u.email, photoURL: u.photoURL, urls: u.urls });
}

export const routes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/user',
    query: z.strictObject({}),
    document: `query { viewer { user { ${USER_FIELDS} } } }`,
    variables: () => ({}),
    result: (d) => toRestUser(d.viewer.user),
  },
  {
    method: 'GET',
    path: '/v1/users/:userId',
    query: z.strictObject({}),
    document: `query($id: ID!) { user(id: $id) { ${USER_FIELDS} } }`,
    variables: ({ params }) => ({ id: params.userId }),
    result: (d) => toRestUser(d.user),
  },
];
