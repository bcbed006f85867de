// Imports every area (each registers its types, queries and mutations on the builder) and
// builds the schema. The order only matters for readability of the printed SDL.
import { builder } from './builder.ts';
import './common.ts';
import './users.ts';
import './organizations.ts';
import './members.ts';
import './teams.ts';
import './collections.ts';
import './spaces.ts';
import './content.ts';
import './imports.ts';
import './search.ts';
import './change-requests.ts';
import './pdf-exports.ts';
import './comments.ts';
import './sites.ts';
import './site-structure.ts';
import './share-links.ts';
import './site-search.ts';
import './visitor-keys.ts';
import './site-redirects.ts';
import './published-url.ts';
import './sso.ts';
import './openapi.ts';
import './translations.ts';
import './audit-events.ts';
import './subscriptions.ts';
import './webhooks.ts';
import './rate-limit.ts';

export const schema = builder.toSchema({ sortSchema: false });
