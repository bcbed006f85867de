// The role order, lowest to highest. Every comparison of roles goes through here.
import type { Role } from '../generated/prisma/enums.ts';

export const ROLES = ['read', 'comment', 'edit', 'review', 'create', 'admin'] as const satisfies readonly Role[];
export type { Role };

const RANK: Record<Role, number> = { read: 1, comment: 2, edit: 3, review: 4, create: 5, admin: 6 };

export function atLeast(role: Role | null | undefined, min: Role): boolean {
  return role != null && RANK[role] >= RANK[min];
}

export function highestRole(...roles: Array<Role | null | undefined>): Role | null {
  let best: Role | null = null;
  for (const r of roles) if (r && (!best || RANK[r] > RANK[best])) best = r;
  return best;
}

export const isRole = (v: unknown): v is Role => typeof v === 'string' && v in RANK;
