// The per-request context shared by GraphQL resolvers and the REST shim (which runs the same
// GraphQL operations): the domain context plus per-request loaders.
import { Access } from '../auth/access.ts';
import type { DomainContext } from '../domain/context.ts';

export type Context = DomainContext & {
  /** Per-request memo for loaders created lazily by area modules (see `loader()` in common.ts). */
  loaders: Map<string, unknown>;
};

export function createContext(base: Omit<DomainContext, 'access'>): Context {
  return { ...base, access: new Access(base.prisma, base.viewer), loaders: new Map() };
}
