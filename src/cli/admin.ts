// Admin CLI: `npm run admin -- <command> [options]`, run from its bundle (.build/cli/admin.mjs,
// scripts/build.mjs). Works on DATABASE_URL, or on the embedded PostgreSQL under DATA_DIR (used
// when a server already runs it, started here otherwise). Failures are one line on stderr: exit
// code 2 for a usage error, 1 otherwise.
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../config.ts';
import { startEmbeddedPostgres, ensureDatabase, type EmbeddedDatabase } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { checkDatabase, errorLine, redactUrl } from '../db/check.ts';
import { createPrisma, type Db } from '../db/client.ts';
import { AppError } from '../lib/errors.ts';
import { findOrCreateUser, createOrganizationWithAdmin, addMembership, createApiToken, requireTokenSites } from '../domain/users.ts';
import { Access } from '../auth/access.ts';
import { ROLES, isRole } from '../auth/roles.ts';
import { recordEvent, type EventActor } from '../events/log.ts';
import { systemClock } from '../lib/clock.ts';

/** Changes made here are recorded in the event log as the system's, source `cli`. */
const CLI_ACTOR: EventActor = { viewer: null, source: 'cli', clock: systemClock };

const USAGE = `Usage: npm run admin -- <command> [options]

  create-user  --email <email> --name <display name>     create a user (or show the existing one)
  create-org   --title <title> --admin-email <email>     create an organization with that admin
  add-member   --org <org id> --email <email> --role <${ROLES.join('|')}|guest>
  create-token --email <email> [--label <label>]         issue an API token (prints only the token)
               [--published [--site <site id>]...]       … limited to published reads (a front end's token),
                                                         optionally to these sites (the user must read each as a member)
  list-orgs                                              id, title and member count of every organization

Uses DATABASE_DIRECT_URL (else DATABASE_URL), else the embedded PostgreSQL in DATA_DIR (default ./.data/pg).`;

const OPTIONS = {
  email: { type: 'string' },
  name: { type: 'string' },
  title: { type: 'string' },
  'admin-email': { type: 'string' },
  org: { type: 'string' },
  role: { type: 'string' },
  label: { type: 'string' },
  published: { type: 'boolean' },
  site: { type: 'string', multiple: true },
  help: { type: 'boolean', short: 'h' },
} as const;

type Options = Partial<Record<Exclude<keyof typeof OPTIONS, 'help' | 'published' | 'site'>, string>> & { published?: boolean; site?: string[] };

class UsageError extends Error {}
/** A failure to explain in one line (no stack). */
class CliError extends Error {}

function required(opts: Options, name: Exclude<keyof Options, 'published' | 'site'>): string {
  const v = opts[name]?.trim();
  if (!v) throw new UsageError(`--${name} is required`);
  return v;
}

const displayNameFor = (email: string) => email.split('@')[0] || email;

async function userByEmail(db: Db, email: string) {
  const user = await db.user.findUnique({ where: { email: email.toLowerCase() } });
  if (!user) throw new AppError('NOT_FOUND', `No user with e-mail ${email} (create it with create-user)`);
  return user;
}

const commands: Record<string, (db: Db, opts: Options) => Promise<string>> = {
  async 'create-user'(db, opts) {
    const email = required(opts, 'email');
    const user = await db.$transaction((tx) => findOrCreateUser(tx, { email, displayName: required(opts, 'name') }));
    return `${user.id}\t${user.email}\t${user.displayName}`;
  },

  async 'create-org'(db, opts) {
    const title = required(opts, 'title');
    const adminEmail = required(opts, 'admin-email');
    const org = await db.$transaction(async (tx) => {
      const admin = await findOrCreateUser(tx, { email: adminEmail, displayName: displayNameFor(adminEmail) });
      const created = await createOrganizationWithAdmin(tx, title, admin.id);
      await recordEvent(
        tx,
        CLI_ACTOR,
        { type: 'organization_created', organizationId: created.id, objectId: created.id, payload: { title: created.title } },
        { type: 'member_added', organizationId: created.id, objectId: admin.id, payload: { role: 'admin' } },
      );
      return created;
    });
    return `${org.id}\t${org.title}`;
  },

  async 'add-member'(db, opts) {
    const organizationId = required(opts, 'org');
    const email = required(opts, 'email');
    const roleArg = required(opts, 'role');
    if (roleArg !== 'guest' && !isRole(roleArg)) throw new UsageError(`--role must be one of ${ROLES.join(', ')}, guest`);
    const role = roleArg === 'guest' ? null : roleArg;
    const { member, created } = await db.$transaction(async (tx) => {
      const org = await tx.organization.findUnique({ where: { id: organizationId }, select: { id: true } });
      if (!org) throw new AppError('NOT_FOUND', `No organization ${organizationId}`);
      const user = await findOrCreateUser(tx, { email, displayName: displayNameFor(email) });
      const added = await addMembership(tx, organizationId, user.id, role);
      if (added.created) await recordEvent(tx, CLI_ACTOR, { type: 'member_added', organizationId, objectId: user.id, payload: { role } });
      return added;
    });
    if (!created) console.error(`already a member (role ${member.role ?? 'guest'}); nothing changed`);
    return `${member.userId}\t${member.role ?? 'guest'}`;
  },

  async 'create-token'(db, opts) {
    const user = await userByEmail(db, required(opts, 'email'));
    if (opts.site?.length && !opts.published) throw new UsageError('--site needs --published');
    // The sites are checked as the mutation checks them: each one the user reads as a member.
    const sites = opts.site ?? [];
    const siteIds = opts.published
      ? await requireTokenSites({ access: new Access(db, { user, tokenId: 'cli' }) }, sites, 'site').catch((err: unknown) => {
          const i = err instanceof AppError && err.code === 'NOT_FOUND' ? Number(err.field?.split('.')[1]) : NaN;
          throw Number.isInteger(i) ? new AppError('NOT_FOUND', `No site ${sites[i]} that ${user.email} reads as a member (--site)`) : err;
        })
      : [];
    const scope = opts.published ? ({ scope: 'published', siteIds } as const) : {};
    const { token } = await db.$transaction((tx) => createApiToken(tx, user.id, opts.label?.trim() || 'CLI', undefined, undefined, scope));
    return token;
  },

  async 'list-orgs'(db) {
    const orgs = await db.organization.findMany({ orderBy: { createdAt: 'asc' }, include: { _count: { select: { members: true } } } });
    if (orgs.length === 0) console.error('no organizations');
    return orgs.map((o) => `${o.id}\t${o.title}\t${o._count.members} members`).join('\n');
  },
};

/** DATABASE_DIRECT_URL or DATABASE_URL, or the embedded server: reused when one listens on the configured port. */
async function connect(): Promise<{ databaseUrl: string; embedded?: EmbeddedDatabase }> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    throw new CliError(errorLine(err));
  }
  const timeoutMs = config.dbConnectTimeoutMs || 10_000;
  if (config.databaseUrl) {
    // The direct URL when there is one: the migrations' advisory lock needs a session (no pooler).
    const databaseUrl = config.databaseDirectUrl ?? config.databaseUrl;
    await checkDatabase(databaseUrl, timeoutMs).catch((err) => {
      throw new CliError(`cannot reach the database at ${redactUrl(databaseUrl)}: ${errorLine(err)}`);
    });
    return { databaseUrl };
  }
  const url = (db: string) => `postgresql://postgres:docgraph@127.0.0.1:${config.embeddedPgPort}/${db}`;
  const probe = new pg.Client({ connectionString: url('postgres') });
  const running = await probe.connect().then(
    () => true,
    () => false,
  );
  await probe.end().catch(() => {});
  let embedded: EmbeddedDatabase | undefined;
  if (!running) {
    const dataDir = path.resolve(config.dataDir, 'pg');
    embedded = await startEmbeddedPostgres({ dataDir, port: config.embeddedPgPort }).catch((err) => {
      throw new CliError(`cannot start the embedded PostgreSQL (data ${dataDir}, port ${config.embeddedPgPort}; set DATABASE_URL, DATA_DIR or EMBEDDED_PG_PORT): ${errorLine(err)}`);
    });
  }
  await ensureDatabase(url('postgres'), 'docgraph');
  return { databaseUrl: url('docgraph'), embedded };
}

async function main(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  const [name, ...extra] = positionals;
  if (values.help || !name) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  const command = commands[name];
  if (!command) throw new UsageError(`Unknown command "${name}"`);
  if (extra.length) throw new UsageError(`Unexpected argument "${extra[0]}"`);

  const { databaseUrl, embedded } = await connect();
  const { prisma } = createPrisma(databaseUrl, { poolSize: 2 });
  try {
    await migrate(databaseUrl);
    console.log(await command(prisma, values));
    return 0;
  } finally {
    await prisma.$disconnect();
    await embedded?.stop();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError || String((err as { code?: string }).code).startsWith('ERR_PARSE_ARGS')) {
      console.error(`${err.message}\n\n${USAGE}`);
      process.exit(2);
    }
    // One line: the message of an expected failure, else the error's first line (its stack with
    // LOG_LEVEL=debug).
    console.error(`admin: ${err instanceof AppError || err instanceof CliError ? err.message : errorLine(err)}`);
    if (!(err instanceof AppError || err instanceof CliError) && /^(debug|trace)$/.test(process.env.LOG_LEVEL ?? '')) console.error(err);
    process.exit(1);
  },
);
