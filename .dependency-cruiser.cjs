// The house's import rules (docs/CONVENTIONS.md). test/architecture.test.ts fails on any
// violation; `npx depcruise src` prints them.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'An import circle ties two areas into one.', from: {}, to: { circular: true } },
    { name: 'graphql-not-rest', severity: 'error', comment: 'REST runs GraphQL documents: GraphQL never knows the contract dialect.', from: { path: '^src/graphql/' }, to: { path: '^src/rest/' } },
    { name: 'auth-not-domain', severity: 'error', comment: 'Access stands below the domain.', from: { path: '^src/auth/' }, to: { path: '^src/(domain|graphql|rest|http)/' } },
    { name: 'lib-floor', severity: 'error', comment: 'lib/ imports nothing from src/ but db/ and config.ts.', from: { path: '^src/lib/' }, to: { path: '^src/', pathNot: '^src/(lib|db|generated)/|^src/config\\.ts$' } },
    { name: 'rest-not-http', severity: 'error', comment: 'The route table stands below the edge: http/ serves rest/, never the other way.', from: { path: '^src/rest/' }, to: { path: '^src/http/' } },
    { name: 'events-floor', severity: 'error', comment: 'The event wing (catalogue, log, feed, streams) stands below the domain and the APIs: it imports only auth/, db/, lib/, services.ts and config.ts.', from: { path: '^src/events/' }, to: { path: '^src/', pathNot: '^src/(events|auth|db|lib|generated)/|^src/(services|config)\\.ts$' } },
    { name: 'domain-not-up', severity: 'error', comment: 'The domain is free of GraphQL, REST and HTTP.', from: { path: '^src/domain/' }, to: { path: '^src/(graphql|rest|http)/' } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/generated/' },
    tsPreCompilationDeps: true,
    combinedDependencies: false,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
