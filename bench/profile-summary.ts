// Summarize a V8 CPU profile of the gateway (from `npm run bench -- --cpu-prof`): self time by
// package / source area and the hottest functions.
//
//   tsx bench/profile-summary.ts bench/results/profiles/<file>.cpuprofile [top=25]
import fs from 'node:fs';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const file = process.argv[2];
if (!file) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const top = Number(process.argv[3] ?? 25);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0));
const total = [...self.values()].reduce((a, b) => a + b, 0);

function area(url: string, name: string): string {
  if (!url) return name === '(garbage collector)' ? '(gc)' : name === '(idle)' || name === '(program)' ? name : '(native)';
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  const src = /\/(src\/[^/]+(?:\/[^/]+)?)/.exec(url);
  if (src) return src[1];
  if (url.startsWith('node:')) return 'node:internal';
  return url.split('/').slice(-2).join('/');
}

const areas = new Map<string, number>();
const fns = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  const a = area(n.callFrame.url, n.callFrame.functionName);
  areas.set(a, (areas.get(a) ?? 0) + t);
  const key = `${n.callFrame.functionName || '(anonymous)'}  ${a}:${n.callFrame.lineNumber + 1}`;
  fns.set(key, (fns.get(key) ?? 0) + t);
}
const pct = (t: number) => ((100 * t) / total).toFixed(1).padStart(5) + '%';
console.log(`total sampled ${(total / 1e6).toFixed(1)} s`);
console.log('\nself time by area:');
for (const [a, t] of [...areas].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(t)}  ${a}`);
console.log('\nhottest functions (self):');
for (const [f, t] of [...fns].sort((x, y) => y[1] - x[1]).slice(0, top)) console.log(`  ${pct(t)}  ${f}`);
