// Prisma CLI configuration. Only `prisma generate` is used here (the migrate commands need a
// native engine this machine cannot download): migrations are applied by src/db/migrate.ts.
import { defineConfig } from 'prisma/config';

export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  // Read directly: env() throws when the variable is unset and would break `generate`.
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost:5432/docgraph' },
});
