// Random requests from an OpenAPI document: values shaped by each schema, with edge cases and wrong types mixed in.
import fc from 'fast-check';

type Schema = Record<string, any>;

const EDGE_STRINGS = [
  '',
  ' ',
  'x'.repeat(300),
  '1e20',
  '-1',
  '0',
  'null',
  'true',
  '%00',
  '../../etc/passwd',
  '33612345678',
  '+33612345678',
  '0611223344',
  "'; drop table messages; --",
  '😀',
  '2026-13-45T25:61:00Z',
  '01a20dde-deb7-7154-af39-930b1f9a5043',
];
const EDGE_NUMBERS = [0, -1, 1, 1e20, -1e20, 2 ** 53, 0.5, 1e-9, 100, 101, 1_000_001];

function resolve(schema: Schema, doc: Schema): Schema {
  let s = schema;
  for (let i = 0; s?.$ref && i < 10; i++) s = doc.components?.schemas?.[String(s.$ref).split('/').pop()!] ?? {};
  return s ?? {};
}

/** A value for `schema`: mostly of its shape (required fields present, others at random), sometimes anything. */
export function valueOf(schema: Schema, doc: Schema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  const wrong = fc.oneof(fc.constant(null), fc.integer(), fc.string(), fc.boolean(), fc.constant([]), fc.constant({}));
  const shaped = ((): fc.Arbitrary<unknown> => {
    if (depth > 5) return fc.constant(null);
    const variants = s.anyOf ?? s.oneOf;
    if (Array.isArray(variants) && variants.length > 0) return fc.oneof(...variants.map((v: Schema) => valueOf(v, doc, depth + 1)));
    if (Array.isArray(s.enum)) return fc.constantFrom(...s.enum, 'BOGUS');
    if (s.const !== undefined) return fc.constant(s.const);
    switch (s.type) {
      case 'string':
        return fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom(...EDGE_STRINGS));
      case 'integer':
        return fc.oneof(fc.integer({ min: -10, max: 1_000 }), fc.constantFrom(...EDGE_NUMBERS));
      case 'number':
        return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(...EDGE_NUMBERS));
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return fc.array(valueOf(s.items ?? {}, doc, depth + 1), { maxLength: 3 });
      case 'object':
      default: {
        const props: Record<string, Schema> = s.properties ?? {};
        const required = new Set<string>(s.required ?? []);
        const keys = Object.keys(props);
        if (keys.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxKeys: 3 });
        return fc.record(Object.fromEntries(keys.map((k) => [k, valueOf(props[k]!, doc, depth + 1)])), { requiredKeys: keys.filter((k) => required.has(k)) });
      }
    }
  })();
  return fc.oneof({ weight: 9, arbitrary: shaped }, { weight: 1, arbitrary: wrong });
}

export interface FuzzRequest {
  method: string;
  path: string;
  query: string;
  body: unknown;
  key: 'tenant' | 'admin' | 'none';
}

/** Query values that break numbers, dates and text handling. */
export const EDGE_QUERY_VALUES = ['1e20', '-1', '0', '99999999999999999999', '1.5', 'abc', '', '%00', 'null', '2026-02-30', 'x'.repeat(2_000)];

/**
 * The requests every operation gets, not left to chance: each query parameter alone with each edge value, and the
 * body empty, an empty object, an empty array and null — with the key its path is for, on ids that exist.
 */
export function edgeRequestsFor(path: string, method: string, op: Schema, knownIds: string[]): FuzzRequest[] {
  const params: Schema[] = op.parameters ?? [];
  const key: FuzzRequest['key'] = path.startsWith('/admin/') ? 'admin' : 'tenant';
  const out: FuzzRequest[] = [];
  const paths = knownIds.map((id) => path.replace(/\{[^}]+\}/g, encodeURIComponent(id)));
  for (const p of paths.slice(0, path.includes('{') ? knownIds.length : 1)) {
    for (const q of params.filter((x) => x.in === 'query')) {
      for (const v of EDGE_QUERY_VALUES)
        out.push({ method: method.toUpperCase(), path: p, query: `${encodeURIComponent(q.name)}=${encodeURIComponent(v)}`, body: undefined, key });
    }
    if (op.requestBody) for (const body of [{}, [], null, 'text', 0]) out.push({ method: method.toUpperCase(), path: p, query: '', body, key });
    else out.push({ method: method.toUpperCase(), path: p, query: '', body: undefined, key });
  }
  return out;
}

/** Random requests to one operation: path parameters (ids that exist among them), query parameters and a body from its schemas. */
export function requestsFor(path: string, method: string, op: Schema, doc: Schema, knownIds: string[] = []): fc.Arbitrary<FuzzRequest> {
  const params: Schema[] = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === 'path');
  const queryParams = params.filter((p) => p.in === 'query');
  const bodySchema = op.requestBody?.content?.['application/json']?.schema;
  const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  return fc
    .record({
      pathValues: fc.tuple(
        ...pathParams.map((p) =>
          knownIds.length > 0 ? fc.oneof(fc.constantFrom(...knownIds), valueOf(p.schema ?? {}, doc).map(text)) : valueOf(p.schema ?? {}, doc).map(text),
        ),
      ),
      queryValues: fc.tuple(...queryParams.map((p) => fc.option(valueOf(p.schema ?? {}, doc).map(text), { nil: undefined }))),
      body: bodySchema ? valueOf(bodySchema, doc) : fc.constant(undefined),
      key: fc.constantFrom<FuzzRequest['key']>('tenant', 'admin', 'none'),
    })
    .map(({ pathValues, queryValues, body, key }) => {
      let p = path;
      pathParams.forEach((param, i) => (p = p.replace(`{${param.name}}`, encodeURIComponent(pathValues[i]!) || 'x')));
      const q = queryParams
        .map((param, i) => (queryValues[i] === undefined ? null : `${encodeURIComponent(param.name)}=${encodeURIComponent(queryValues[i]!)}`))
        .filter((x): x is string => x !== null)
        .join('&');
      return { method: method.toUpperCase(), path: p, query: q, body, key };
    });
}
