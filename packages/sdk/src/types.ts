// Types of requests and answers, read from the generated schema (schema.d.ts) by path and method.
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
export type Schemas = components['schemas'];
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** The methods a path has. */
export type MethodsOf<P extends keyof paths> = { [M in HttpMethod]-?: [NonNullable<paths[P][M]>] extends [never] ? never : M }[HttpMethod];
export type OperationOf<P extends keyof paths, M extends HttpMethod> = NonNullable<paths[P][M]>;

type ParametersOf<O> = O extends { parameters: infer X } ? X : never;
export type PathParamsOf<O> = ParametersOf<O> extends { path: infer X } ? X : never;
export type QueryOf<O> = ParametersOf<O> extends { query?: infer X } ? NonNullable<X> : never;
export type BodyOf<O> = O extends { requestBody?: infer B }
  ? [NonNullable<B>] extends [never]
    ? never
    : NonNullable<B> extends { content: { 'application/json': infer J } }
      ? J
      : never
  : never;
type JsonOf<R> = R extends { content: { 'application/json': infer T } } ? T : undefined;
/** The body of an operation's 2xx answer (undefined for 204). */
export type AnswerOf<O> = O extends { responses: infer R } ? { [S in keyof R]: S extends 200 | 201 | 202 | 204 ? JsonOf<R[S]> : never }[keyof R] : never;

/** What a request takes beside its method and path: the path's parameters, the query, the body when it has one. */
export type RequestInput<O> = {
  query?: QueryOf<O>;
  headers?: Record<string, string>;
  /** Sent as Idempotency-Key; the request may then be tried again after a 503 or a lost connection. */
  idempotencyKey?: string;
  signal?: AbortSignal;
} & ([PathParamsOf<O>] extends [never] ? { path?: undefined } : { path: PathParamsOf<O> }) &
  ([BodyOf<O>] extends [never] ? { body?: undefined } : { body: BodyOf<O> });

/** The answer of an operation, by operationId. */
export type Answer<K extends keyof operations> = AnswerOf<operations[K]>;
/** The JSON body of an operation, by operationId. */
export type Body<K extends keyof operations> = BodyOf<operations[K]>;
/** The query of an operation, by operationId. */
export type Query<K extends keyof operations> = QueryOf<operations[K]>;

export type Message = Schemas['Message'];
export type SentMessage = Schemas['SentMessage'];

/** An RCS send: its `body` is one of TEXT, CARD, CAROUSEL and FILE, each with its own fields, told apart by `type`. */
export type RcsMessage = Body<'createRcsMessage'>;
