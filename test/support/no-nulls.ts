import assert from 'node:assert/strict';

/**
 * Fails on any `null` in a parsed JSON value, naming where it is (`$.items[2].status.detail`): what Tern answers and
 * sends leaves an unknown or unset field out, because typed clients refuse nulls.
 */
export function assertNoNulls(value: unknown, where: string): void {
  const found: string[] = [];
  const walk = (v: unknown, path: string) => {
    if (v === null) found.push(path);
    else if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (typeof v === 'object') for (const [k, item] of Object.entries(v as object)) walk(item, `${path}.${k}`);
  };
  walk(value, '$');
  assert.deepEqual(found, [], `${where}: null at ${found.slice(0, 10).join(', ')}`);
}
