// What domain functions receive: data access, the caller, time and services. Free of GraphQL
// and HTTP types, so the same rules serve both APIs, the CLI and background jobs.
import type { Logger } from 'pino';
import type { Db } from '../db/client.ts';
import type { Config } from '../config.ts';
import type { Clock } from '../lib/clock.ts';
import type { Access, Viewer } from '../auth/access.ts';
import type { Services } from '../services.ts';
import type { EventSource } from '../generated/prisma/client.ts';

export type DomainContext = {
  prisma: Db;
  config: Config;
  clock: Clock;
  log: Logger;
  viewer: Viewer | null;
  /** The entry point of this call (`rest`, `graphql`, `job`, `cli`), recorded on its events. */
  source: EventSource;
  access: Access;
  services: Services;
};

/** What a background task receives (src/tasks.ts): the context without a caller. */
export type TaskDeps = { prisma: Db; config: Config; clock: Clock; log: Logger; services: Services };
