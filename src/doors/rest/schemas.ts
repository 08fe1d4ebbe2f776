import { type TSchema, Type } from 'typebox';

export const ErrorBody = Type.Object(
  {
    errorCode: Type.String({ description: '"<http status>.<nnn>", e.g. "403.005"' }),
    message: Type.String(),
    detail: Type.String(),
  },
  { $id: 'Error', description: 'Every error Tern answers over REST' },
);

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Money = Type.Object({ amount: Type.Number(), currency: Type.String() });

export const PageQuery = {
  page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
};

export const Uuid = Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' });

export const IdParams = Type.Object({ id: Uuid });

/** The standard error answers, to spread into a route's `response` schema. */
export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref('Error')])) as Record<number, TSchema>;

export function pageItems<T extends TSchema>(item: T) {
  return Type.Object({
    items: Type.Array(item),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  });
}
