import { AjvCompiler } from '@fastify/ajv-compiler';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;
type Compile = (route: { schema: unknown }) => unknown;
type Factory = (externalSchemas: unknown, options: unknown) => Compile;

/**
 * Keeps what `compile` made of each schema, by the schema's content (routes build their schemas as they are
 * registered, so the objects are new every time), for compilers built with the same shared schemas and options.
 */
function byContent(compile: Compile): Compile {
  const compiled = new Map<string, unknown>();
  return (route) => {
    const key = JSON.stringify(route.schema);
    let done = compiled.get(key);
    if (done === undefined) {
      done = onFirstUse(() => compile(route) as CompiledSchema);
      compiled.set(key, done);
    }
    return done;
  };
}

/** What Fastify reads of a compiled schema besides calling it: Ajv's errors and schema (which lets it coerce a root value). */
type CompiledSchema = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * Compiles on the first call (or the first look at what Fastify reads of it): a server compiles only the schemas of
 * the routes it is asked for, the first time each is (a few milliseconds), instead of every route's as it starts.
 */
function onFirstUse(compile: () => CompiledSchema): CompiledSchema {
  let fn: CompiledSchema | undefined;
  const get = (): CompiledSchema => (fn ??= compile());
  const first = ((...args: unknown[]) => get()(...args)) as CompiledSchema;
  Object.defineProperty(first, 'errors', { get: () => get().errors });
  Object.defineProperty(first, 'schemaEnv', { get: () => get().schemaEnv });
  return first;
}

/** A compiler per set of shared schemas and options, as Fastify's own pools do, kept for the process. */
function pooled(factory: Factory): Factory {
  const pools = new Map<string, Compile>();
  return (externalSchemas, options) => {
    const key = `${JSON.stringify(externalSchemas)}${JSON.stringify(options)}`;
    let pool = pools.get(key);
    if (!pool) {
      pool = byContent(factory(externalSchemas, options));
      pools.set(key, pool);
    }
    return pool;
  };
}

/**
 * Fastify's own compilers (Ajv for requests, fast-json-stringify for responses), kept for the process instead of
 * built anew with every server, each schema compiled once and only when first used: compiling every route's schemas
 * was most of what building a server cost (about 1.5 s of CPU on a 2-core machine), and a process that builds its
 * server again — the test suite builds hundreds — reuses what the first one compiled. Validators keep no state
 * between requests (Ajv itself answers one function for a schema compiled twice).
 */
export const sharedSchemaCompilers = {
  buildValidator: pooled(AjvCompiler() as unknown as Factory),
  buildSerializer: pooled(SerializerSelector() as unknown as Factory),
} as unknown as CompilersFactory;
