// The REST representation of a user, shared by every area that embeds one.
import { compact } from './router.ts';

export const USER_FIELDS = 'id displayName email photoURL urls { location }';

export function toRestUser(u: any) {
  return compact({ object: 'user', id: u.id, displayName: u.displayName, email: u.email, photoURL: u.photoURL, urls: u.urls });
}
