// Index check: every SQL statement a scenario's probe request issued is planned again with
// `EXPLAIN (GENERIC_PLAN)` (PostgreSQL 16+, plans a statement with its $n placeholders), and
// each sequential scan of a table is reported with the table's size. A sequential scan of a
// big table on a hot path is the sign of a missing index (or of a query that cannot use one).
import pg from 'pg';

export type SeqScan = { scenario: string; table: string; rows: number; statement: string; filter?: string };

type PlanNode = { 'Node Type': string; 'Relation Name'?: string; Filter?: string; Plans?: PlanNode[] };

function* walk(node: PlanNode): Generator<PlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* walk(child);
}

export async function checkPlans(databaseUrl: string, traces: Map<string, string[]>, minRows = 1000): Promise<{ scans: SeqScan[]; planned: number; failed: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const scans: SeqScan[] = [];
  let planned = 0;
  let failed = 0;
  try {
    const sizes = new Map<string, number>(
      (await client.query<{ relname: string; n: string }>(`SELECT relname, reltuples::bigint AS n FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace`)).rows.map((r) => [r.relname, Number(r.n)]),
    );
    const seen = new Set<string>();
    for (const [scenario, statements] of traces) {
      for (const sql of statements) {
        const text = sql.trim();
        if (!/^(SELECT|WITH|UPDATE|DELETE|INSERT)\b/i.test(text)) continue;
        const key = `${scenario}\u0000${text}`;
        if (seen.has(key)) continue;
        seen.add(key);
        try {
          const r = await client.query(`EXPLAIN (GENERIC_PLAN, FORMAT JSON) ${text}`);
          planned++;
          const plan = (r.rows[0]['QUERY PLAN'] as Array<{ Plan: PlanNode }>)[0].Plan;
          for (const node of walk(plan)) {
            if (node['Node Type'] !== 'Seq Scan' || !node['Relation Name']) continue;
            const rows = sizes.get(node['Relation Name']) ?? 0;
            if (rows < minRows) continue;
            scans.push({ scenario, table: node['Relation Name'], rows, filter: node.Filter, statement: text.replace(/\s+/g, ' ').slice(0, 300) });
          }
        } catch {
          failed++;
        }
      }
    }
  } finally {
    await client.end();
  }
  return { scans, planned, failed };
}
