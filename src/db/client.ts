// The Prisma client on the pg driver adapter. Every query is reported to `onQuery` listeners so
// tests (and the benchmark) can count SQL statements per request.
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from '../generated/prisma/client.ts';

export type Db = PrismaClient;
export type Tx = Omit<PrismaClient, '$connect' | '$disconnect' | '$on' | '$transaction' | '$extends'>;

export type QueryListener = (sql: string) => void;

export function createPrisma(databaseUrl: string, opts: { poolSize?: number } = {}) {
  const adapter = new PrismaPg({ connectionString: databaseUrl, max: opts.poolSize ?? 10 });
  const prisma = new PrismaClient({ adapter, log: [{ emit: 'event', level: 'query' }] });
  const listeners = new Set<QueryListener>();
  prisma.$on('query', (e) => {
    for (const l of listeners) l(e.query);
  });
  return {
    prisma,
    /** Subscribe to every SQL statement; returns the unsubscribe function. */
    onQuery(listener: QueryListener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
