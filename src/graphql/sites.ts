// GraphQL types, queries and mutations for this area (not yet built).
import '../graphql/builder.ts';
