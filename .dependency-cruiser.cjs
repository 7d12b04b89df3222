// The package and layer boundaries of docs/architecture.md, checked by `npm run lint`.
// Layers of @oncely/core, lowest first: each imports only from layers before it.
const CORE_LAYERS = [
  ['errors', 'time', 'events', 'tracing', 'memory'],
  ['key'],
  ['lease'],
  ['flight', 'record'],
  ['security'],
  ['http'],
  ['call'],
  ['registry'],
  ['engine'],
  ['metrics'],
  ['testing'],
];
const core = (folders) => `^packages/core/src/(${folders.join('|')})/`;

const layerRules = CORE_LAYERS.slice(0, -1).map((layer, index) => ({
  name: `core-${layer.join('-')}-imports-downwards`,
  comment: `core/${layer.join(', ')} imports only from the layers below it`,
  severity: 'error',
  from: { path: core(layer) },
  to: { path: core(CORE_LAYERS.slice(index + 1).flat()) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No file imports a file that imports it back, even for types only',
      severity: 'error',
      from: { path: '^(packages|libs|apps)/[^/]+/src/' },
      to: { circular: true },
    },
    {
      name: 'core-imports-no-framework-or-adapter',
      severity: 'error',
      from: { path: '^packages/core/src/' },
      to: {
        path: [
          '^packages/(redis|typeorm|nestjs|express|cli)/',
          'node_modules/(@nestjs|express|fastify|ioredis|typeorm|@oncely)/',
        ],
      },
    },
    {
      name: 'frameworks-import-no-adapter',
      comment: 'Apps hand the Nest module and the Express middleware adapter instances',
      severity: 'error',
      from: { path: '^packages/(nestjs|express)/src/' },
      to: { path: ['^packages/(redis|typeorm)/', 'node_modules/@oncely/(redis|typeorm)/'] },
    },
    {
      name: 'cli-reads-apps-through-core-and-nestjs',
      comment:
        'oncely registry reads claims (core) and Nest module graphs (@oncely/nestjs); it opens no store or coordinator and needs no framework of its own',
      severity: 'error',
      from: { path: '^packages/cli/src/', pathNot: '^packages/cli/src/operator/' },
      to: {
        path: [
          '^packages/(redis|typeorm|express)/',
          'node_modules/@oncely/(redis|typeorm|express)/',
          'node_modules/(@nestjs|express|fastify|ioredis|typeorm)/',
        ],
      },
    },
    {
      name: 'cli-loads-adapters-on-demand',
      comment:
        'The operator commands load @oncely/redis, ioredis, @oncely/typeorm and typeorm with import() only when a flag asks for them: they are optional peers of the CLI',
      severity: 'error',
      from: { path: '^packages/cli/src/operator/' },
      to: {
        dynamic: false,
        path: [
          '^packages/(redis|typeorm|express)/',
          'node_modules/@oncely/(redis|typeorm|express)/',
          'node_modules/(@nestjs|express|fastify|ioredis|typeorm)/',
        ],
      },
    },
    {
      name: 'nothing-imports-the-cli',
      comment: 'The command sits on top of the packages: none of them, and no library, imports it',
      severity: 'error',
      from: { path: '^(packages/(core|redis|typeorm|nestjs|express)|libs/[^/]+)/src/' },
      to: { path: ['^packages/cli/', 'node_modules/@oncely/cli/'] },
    },
    {
      name: 'flight-and-record-apart',
      comment: 'flight/ and record/ share time/, errors/ and memory/, not each other',
      severity: 'error',
      from: { path: core(['flight']) },
      to: { path: core(['record']) },
    },
    {
      name: 'record-and-flight-apart',
      severity: 'error',
      from: { path: core(['record']) },
      to: { path: core(['flight']) },
    },
    ...layerRules,
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js'],
    },
  },
};
