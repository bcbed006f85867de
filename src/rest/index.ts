// The whole /v1 route table, one file per area.
import type { GraphQLSchema } from 'graphql';
import { RestRouter } from './router.ts';
import { routes as organizations } from './organizations.ts';
import { routes as members } from './members.ts';
import { routes as teams } from './teams.ts';
import { routes as collections } from './collections.ts';
import { routes as spaces } from './spaces.ts';
import { routes as content } from './content.ts';
import { routes as search } from './search.ts';
import { routes as changeRequests } from './change-requests.ts';
import { routes as comments } from './comments.ts';
import { routes as sites } from './sites.ts';
import { routes as siteStructure } from './site-structure.ts';
import { routes as shareLinks } from './share-links.ts';
import { routes as siteSearch } from './site-search.ts';
import { routes as visitorKeys } from './visitor-keys.ts';
import { routes as siteRedirects } from './site-redirects.ts';
import { routes as publishedUrl } from './published-url.ts';
import { routes as sso } from './sso.ts';
import { routes as openapi } from './openapi.ts';
import { routes as translations } from './translations.ts';
import { routes as users } from './users.ts';
import { routes as auditEvents } from './audit-events.ts';
import { routes as webhooks } from './webhooks.ts';

export function buildRestRouter(schema: GraphQLSchema) {
  return new RestRouter(schema).add([
    ...organizations,
    ...members,
    ...teams,
    ...collections,
    ...spaces,
    ...content,
    ...search,
    ...changeRequests,
    ...comments,
    ...sites,
    ...siteStructure,
    ...shareLinks,
    ...siteSearch,
    ...visitorKeys,
    ...siteRedirects,
    ...publishedUrl,
    ...sso,
    ...openapi,
    ...translations,
    ...users,
    ...auditEvents,
    ...webhooks,
  ]);
}
