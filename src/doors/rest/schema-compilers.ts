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
function byContent(compile: Compile, wrap: (compiled: CompiledSchema) => CompiledSchema): Compile {
  const compiled = new Map<string, unknown>();
  return (route) => {
    const key = JSON.stringify(route.schema);
    let done = compiled.get(key);
    if (done === undefined) {
      done = onFirstUse(() => wrap(compile(route) as CompiledSchema));
      compiled.set(key, done);
    }
    return done;
  };
}

/** What Fastify reads of a compiled schema besides calling it: Ajv's errors and schema (which lets it coerce a root value). */
type CompiledSchema = ((...args: unknown[]) => unknown) & { errors?: unknown; schemaEnv?: unknown };

/**
 * The instance path (`/send/perKey`) of the first number in `data` that is not finite, or null. Ajv's type coercion
 * reads the strings "Infinity" and "1e400" as the number Infinity, and a number that is not finite is then left out
 * of every numeric keyword (`maximum`, `multipleOf`…): it passed a schema of integers from 1 to 1,000,000.
 */
export function nonFinitePath(data: unknown): string | null {
  const stack: Array<{ value: unknown; path: string }> = [{ value: data, path: '' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) return path;
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}/${i}` });
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) stack.push({ value: v, path: `${path}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}` });
    }
  }
  return null;
}

/** A validator that also refuses numbers that are not finite, with an error in Ajv's form naming where. */
function finiteOnly(validate: CompiledSchema): CompiledSchema {
  let errors: unknown = null;
  const checked = ((...args: unknown[]) => {
    if (!validate(...args)) {
      errors = validate.errors;
      return false;
    }
    const path = nonFinitePath(args[0]);
    if (path === null) {
      errors = null;
      return true;
    }
    errors = [{ instancePath: path, schemaPath: '#/finite', keyword: 'finite', params: {}, message: 'must be a finite number' }];
    return false;
  }) as CompiledSchema;
  Object.defineProperty(checked, 'errors', { get: () => errors });
  Object.defineProperty(checked, 'schemaEnv', { get: () => validate.schemaEnv });
  return checked;
}

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
function pooled(factory: Factory, wrap: (compiled: CompiledSchema) => CompiledSchema = (c) => c): Factory {
  const pools = new Map<string, Compile>();
  return (externalSchemas, options) => {
    const key = `${JSON.stringify(externalSchemas)}${JSON.stringify(options)}`;
    let pool = pools.get(key);
    if (!pool) {
      pool = byContent(factory(externalSchemas, options), wrap);
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
  buildValidator: pooled(AjvCompiler() as unknown as Factory, finiteOnly),
  buildSerializer: pooled(SerializerSelector() as unknown as Factory),
} as unknown as CompilersFactory;
