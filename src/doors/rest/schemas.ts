import { type Static, type TSchema, Type } from 'typebox';

export const ErrorBody = Type.Object(
  {
    errorCode: Type.String({ description: '"<http status>.<nnn>", e.g. "403.005"' }),
    message: Type.String(),
    detail: Type.String(),
  },
  { $id: 'Error', description: 'Every error Tern answers over REST' },
);

/**
 * A value or null, for request fields where null removes a setting. Answers never carry a null: an unset field is left
 * out (`Type.Optional`), since typed clients refuse nulls. A primitive schema becomes `type: [t, "null"]`: with an
 * `anyOf`, AJV's type coercion would turn a null into "" (or 0) in the first branch and never see the null one.
 */
export const Nullable = <T extends TSchema>(schema: T) => {
  const s = schema as TSchema & { type?: unknown; enum?: unknown[] };
  if (typeof s.type !== 'string') return Type.Union([schema, Type.Null()]);
  return Type.Unsafe<Static<T> | null>({ ...s, type: [s.type, 'null'], ...(Array.isArray(s.enum) && { enum: [...s.enum, null] }) });
};

export const Money = Type.Object({ amount: Type.Number(), currency: Type.String() });

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
};

export const Uuid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' });

export const IdParams = Type.Object({ id: Uuid });

/** The standard error answers, to spread into a route's `response` schema. */
export const errorResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')])) as Record<number, TSchema>;

export function pageItems<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  });
}
