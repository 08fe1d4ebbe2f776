/**
 * What Tern answers leaves an unknown or unset field out instead of writing `null`: typed clients validate a field
 * as "a string, or absent", and a null breaks them. This drops every null (and undefined) property at every level
 * of a JSON-like value, and null items of arrays.
 */
export function omitNulls<T>(value: T): WithoutNulls<T> {
  if (Array.isArray(value)) return value.filter((v) => v !== null && v !== undefined).map(omitNulls) as WithoutNulls<T>;
  if (value === null || typeof value !== 'object' || !isPlain(value)) return value as WithoutNulls<T>;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && v !== undefined) setOwn(out, key, omitNulls(v));
  }
  return out as WithoutNulls<T>;
}

/**
 * Sets `key` as an own property of `target`, as a spread or JSON.parse would: a parsed "__proto__" key, assigned,
 * would set the object's prototype instead.
 */
export function setOwn(target: object, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}

/** A type whose nullable properties became optional ones, at every level. */
export type WithoutNulls<T> = T extends readonly (infer U)[]
  ? WithoutNulls<U>[]
  : T extends Date
    ? T
    : T extends object
      ? { [K in keyof T as null extends T[K] ? never : K]: WithoutNulls<T[K]> } & {
          [K in keyof T as null extends T[K] ? K : never]?: WithoutNulls<Exclude<T[K], null>>;
        }
      : T;

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** `{ [key]: value }` when there is a value, `{}` otherwise: for spreading an optional field into an answer. */
export function present<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return (value === null || value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}
